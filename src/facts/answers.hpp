// Answer records: what a source of evidence measured, in one layout every consumer reads without
// knowing the source. A kernel probe (probes/kinds.hpp) appends one record per measurement to
// probe.answers:
//   {"probe": "mla_verify", "status": "pass", "reason": "...",
//    "what": "MLA verify attention at k=3 (fp8 KV)",   how a matrix cell's evidence names it
//    "facts": "probe.mla_verify.k.3",                   the source's own facts for it (its rules read those)
//    "where": {"spec.k": 3, "kv.fp8": true},            the plan facts it answers for
//    "plan_shape_only": false,                          true: measured at the plan's own shape only
//    "says": "DeepGEMM 2.6.1 refused next_n=3 on H200"}  optional: the whole phrase, status included
//                                                       (else the evidence reads "<what> <status>")
// A plan or a matrix cell is answered by a record when its facts have the values in "where" (a
// boolean condition reads a missing fact as false); a cell of another shape than the plan's drops
// the plan-shape-only records and their facts before it is derived (rules/sweep.cpp). The derive
// step here writes probe.errors_at_plan, the records that apply and could not run, which the
// verdict's missing facts (rules/plan_path.cpp) and SP9001 read.
//
// A source that answers per matrix cell (the engine check asks the installed engine about each
// cell) adds to the record of a cell "for_cell": the cell's id (engine_cell_id,
// facts/engine_cells.hpp) and "cell_facts": [[dotted name, value], ...], the values its own facts
// take in that cell (a list, so that a null survives the facts patches it travels in), and writes
// beside its list "<source>.unasked_cell_facts", the same for a cell it was not asked about. The
// sweep sets what answers each cell (cell_facts_for, apply_cell_facts) and knows no source.
#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"

namespace specprobe {

inline constexpr const char* kProbeAnswers = "probe.answers";
// The stack probes' records (probes/stack_probes.cpp): the deployment's own DeepGEMM, FlashInfer
// and Triton, in the same layout.
inline constexpr const char* kStackAnswers = "stack.answers";
// The engine check's (probes/engine_check.cpp): the plan's answer and one per matrix cell asked,
// each for the cell whose engine_check.cell names it ("plan", or the cell's id its cell_facts set).
inline constexpr const char* kEngineAnswers = "engine_check.answers";

// Appends a record for RESULT (a probe result: "probe", "status", "reason") to FACTS' LIST; returns it.
Json& append_answer(Json& facts, const Json& result, std::string what, std::string facts_key, Json where,
                    bool plan_shape_only = false, const char* list = kProbeAnswers);

// How a matrix cell's evidence names ANSWER: its "says", else "<what> <status>".
std::string answer_phrase(const Json& answer);

// Whether ANSWER's "where" holds in FACTS.
bool answer_applies(const Json& answer, const Json& facts);

// The records of LIST in FACTS that apply to FACTS, in order.
std::vector<const Json*> applicable_answers(const Json& facts, const char* list = kProbeAnswers);

// The facts LIST's source holds for the matrix cell CELL_ID: the cell_facts of its record for that
// cell, else its unasked_cell_facts when any record of the list answers per cell; null when the
// source does not answer per cell.
Json cell_facts_for(const Json& facts, const char* list, const std::string& cell_id);

// Sets each [name, value] of CELL_FACTS in FACTS (a malformed entry is skipped).
void apply_cell_facts(Json& facts, const Json& cell_facts);

// The answer lists, in the order a matrix cell's evidence lists them.
inline constexpr const char* kAnswerLists[] = {kProbeAnswers, kStackAnswers, kEngineAnswers};

// Drops the plan-shape-only records of LIST and the facts they name (a cell of another shape).
void drop_plan_shape_answers(Json& facts, const char* list = kProbeAnswers);

// Derive step (writer facts.answers): probe.errors_at_plan, the "facts" of every applicable
// record whose status is error, in order (empty when none; not written when no record list).
void derive_answers(Json& facts);

}  // namespace specprobe
