# the config file's options come first; the command line wins
vllm serve org/target --config same.yaml -tp 4
