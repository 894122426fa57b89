package eval

import (
	"strings"
	"unicode"
)

// ChrF computes chrF (Popović 2015) as sacrebleu 2.x does (sacrebleu/metrics/chrf.py). The
// zero value is sacrebleu's default, chrF2: character 6-grams, beta 2, whitespace removed,
// case kept, effective-order averaging. A ChrF is a value; safe for concurrent use.
type ChrF struct {
	CharOrder int // character n-gram order; 0 means 6; at most 32
	Beta      int // recall weighs Beta times as much as precision; 0 means 2; 1..16
	// Whitespace keeps whitespace inside the character n-grams; default false (removed).
	Whitespace bool
	Lowercase  bool // compare lowercased text; default false
	// EpsSmoothing averages per-order F scores with an epsilon for empty orders (chrF++.py,
	// Moses and NLTK); default false: precision and recall are averaged over the orders that
	// occur in both texts (sacrebleu's default).
	EpsSmoothing bool
}

func (c ChrF) order() int {
	if c.CharOrder <= 0 {
		return 6
	}
	return min(c.CharOrder, 32)
}

func (c ChrF) beta() float64 {
	if c.Beta <= 0 {
		return 2
	}
	return float64(min(c.Beta, 16))
}

// chrfStats are the per-order counts [hyp, ref, match] of one segment or a corpus.
type chrfStats [][3]int

// Corpus returns the corpus chrF (0..100) of hyps against refs, where refs[i] are the
// references of hyps[i] (empty references are ignored; a segment with none counts as one
// empty reference). For each segment the reference with the best sentence F score counts,
// and the counts of every segment are summed before the score is taken, as sacrebleu's
// corpus_score does. It panics if len(refs) != len(hyps).
func (c ChrF) Corpus(hyps []string, refs [][]string) float64 {
	if len(refs) != len(hyps) {
		panic("eval: ChrF.Corpus: hyps and refs differ in length")
	}
	total := make(chrfStats, c.order())
	for i, h := range hyps {
		s := c.segment(h, refs[i])
		for n := range total {
			for k := range 3 {
				total[n][k] += s[n][k]
			}
		}
	}
	return c.score(total)
}

// Sentence returns the chrF (0..100) of one hypothesis against its references.
func (c ChrF) Sentence(hyp string, refs ...string) float64 {
	return c.score(c.segment(hyp, refs))
}

// segment returns the statistics of hyp against the best of refs.
func (c ChrF) segment(hyp string, refs []string) chrfStats {
	hg := c.ngrams(hyp)
	var best chrfStats
	bestF := -1.0
	for _, r := range nonEmpty(refs) {
		rg := c.ngrams(r)
		s := make(chrfStats, len(hg))
		for n := range hg {
			s[n] = matchStats(hg[n], rg[n])
		}
		if f := c.score(s); f > bestF {
			best, bestF = s, f
		}
	}
	return best
}

// nonEmpty returns refs without empty strings, or one empty reference when none is left.
func nonEmpty(refs []string) []string {
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		if r != "" {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		out = append(out, "")
	}
	return out
}

// ngrams returns the character n-gram counts of s for n = 1..order.
func (c ChrF) ngrams(s string) []map[string]int {
	if c.Lowercase {
		s = strings.ToLower(s)
	}
	if !c.Whitespace {
		s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), "")
	}
	rs := []rune(s)
	out := make([]map[string]int, c.order())
	for n := range out {
		m := map[string]int{}
		for i := 0; i+n+1 <= len(rs); i++ {
			m[string(rs[i:i+n+1])]++
		}
		out[n] = m
	}
	return out
}

// matchStats returns [hyp count, ref count, clipped matches]; the hypothesis count is 0
// when the reference has no n-gram of the order (sacrebleu's _get_match_statistics).
func matchStats(hyp, ref map[string]int) [3]int {
	var s [3]int
	for g, n := range hyp {
		s[0] += n
		s[2] += min(n, ref[g])
	}
	if len(ref) == 0 {
		s[0] = 0
	}
	for _, n := range ref {
		s[1] += n
	}
	return s
}

// score is sacrebleu's _compute_f_score.
func (c ChrF) score(stats chrfStats) float64 {
	const eps = 1e-16
	factor := c.beta() * c.beta()
	var sum, avgP, avgR float64
	eff := 0
	for _, s := range stats {
		hyp, ref, match := float64(s[0]), float64(s[1]), float64(s[2])
		p, r := eps, eps
		if hyp > 0 {
			p = match / hyp
		}
		if ref > 0 {
			r = match / ref
		}
		if d := factor*p + r; d > 0 {
			sum += (1 + factor) * p * r / d
		} else {
			sum += eps
		}
		if hyp > 0 && ref > 0 {
			avgP, avgR, eff = avgP+p, avgR+r, eff+1
		}
	}
	if c.EpsSmoothing {
		return 100 * sum / float64(len(stats))
	}
	if eff == 0 {
		return 0
	}
	avgP /= float64(eff)
	avgR /= float64(eff)
	if avgP+avgR == 0 {
		return 0
	}
	return 100 * (1 + factor) * avgP * avgR / (factor*avgP + avgR)
}
