#!/bin/sh
echo starting
python app.py --port 1
