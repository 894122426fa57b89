// Package eval measures translation quality: it scores engines on an evaluation set with
// chrF and BLEU (corpus scores that match sacrebleu's), optionally asks a judge model for a
// 0-100 score, and reports per engine, language pair and scene as a terminal table, JSON,
// an SVG chart and the quality figures of a configuration file (Profile.PairQuality).
//
// It is a library first: ChrF, BLEU, Run and Report compute values that tests compare;
// examples/eval only parses flags, shows progress and prints.
//
// # Metrics
//
// ChrF and BLEU follow sacrebleu 2.x (github.com/mjpost/sacrebleu, sacrebleu/metrics/chrf.py
// and bleu.py): the zero values are sacrebleu's defaults, chrF2 (character 6-grams, no word
// n-grams, beta 2, whitespace removed, effective-order averaging) and BLEU (13a
// tokenisation, 4-grams, 'exp' smoothing). Their tests hold sacrebleu's own published test
// cases (test/test_chrf.py, test/test_bleu.py) to 0.01 or better.
//
// # Running a set
//
// Run sends every item of a set ([]Item, from ReadSet or ApertiumSet) to every engine
// named, through a Translator (a
// *translate.Client: every request is pinned to one engine, uncached, so the Client's rate
// limits, quotas, breakers and budget apply as in production), with bounded concurrency,
// a cost cap of its own, progress through a callback, and an optional results file that a
// later Run resumes from.
//
// # Reporting
//
// NewReport scores the outputs per engine, pair and scene; a Report writes a table
// (WriteTable), JSON, an SVG chart (WriteSVG), and the figures for Profile.PairQuality in
// a configuration file's form (ConfigJSON), or loads them into a translate.Config (Apply).
package eval
