package eval

import (
	"math"
	"regexp"
	"strings"
)

// Smoothing is how BLEU treats an n-gram order without matches.
type Smoothing uint8

// Smoothing methods (Chen and Cherry 2014, as sacrebleu names them).
const (
	SmoothExp   Smoothing = iota // 'exp', the default: NIST's method (mteval-v13a.pl)
	SmoothFloor                  // 'floor': BLEU.Floor matches in place of zero
	SmoothNone                   // 'none': a zero precision makes BLEU 0
)

// Tokenizer is how BLEU splits text into words.
type Tokenizer uint8

// Tokenizers.
const (
	Tokenize13a  Tokenizer = iota // mteval-v13a, the default (sacrebleu's '13a')
	TokenizeNone                  // whitespace only (sacrebleu's 'none')
)

// BLEU computes BLEU (Papineni et al. 2002) as sacrebleu 2.x does
// (sacrebleu/metrics/bleu.py). The zero value is sacrebleu's default: 13a tokenisation,
// 4-grams, 'exp' smoothing, case kept. A BLEU is a value; safe for concurrent use.
type BLEU struct {
	Tokenize  Tokenizer // Tokenize13a (default) or TokenizeNone
	Smooth    Smoothing // SmoothExp (default), SmoothFloor or SmoothNone
	Floor     float64   // SmoothFloor's value, used as given (sacrebleu's default is 0.1); >= 0
	Lowercase bool      // compare lowercased text; default false
	// EffectiveOrder averages only the orders up to the highest one the hypotheses have
	// n-grams of (for sentence-level BLEU); default false.
	EffectiveOrder bool
}

// maxOrder is BLEU's n-gram order.
const maxOrder = 4

// BLEUStats are BLEU's sufficient statistics over a corpus.
type BLEUStats struct {
	HypLen, RefLen int           // words of the hypotheses, and of the closest references
	Correct        [maxOrder]int // clipped matching n-grams per order
	Total          [maxOrder]int // hypothesis n-grams per order
}

// Corpus returns the corpus BLEU (0..100) of hyps against refs, where refs[i] are the
// references of hyps[i] (empty ones ignored). It panics if len(refs) != len(hyps).
func (b BLEU) Corpus(hyps []string, refs [][]string) float64 {
	return b.Score(b.Stats(hyps, refs))
}

// Stats returns the sufficient statistics of hyps against refs, summed over segments.
func (b BLEU) Stats(hyps []string, refs [][]string) BLEUStats {
	if len(refs) != len(hyps) {
		panic("eval: BLEU.Stats: hyps and refs differ in length")
	}
	var st BLEUStats
	for i, h := range hyps {
		b.addSegment(&st, h, refs[i])
	}
	return st
}

// addSegment adds one segment's statistics: n-gram matches clipped by the highest count of
// any reference, and the reference length closest to the hypothesis's (the shorter on ties).
func (b BLEU) addSegment(st *BLEUStats, hyp string, refs []string) {
	var refMax [maxOrder]map[string]int
	refLen, bestDiff := -1, -1
	hw := b.words(hyp)
	for i, r := range nonEmpty(refs) {
		rw := b.words(r)
		for o, m := range wordNgrams(rw) {
			if i == 0 {
				refMax[o] = m
				continue
			}
			for g, n := range m {
				refMax[o][g] = max(refMax[o][g], n)
			}
		}
		d := abs(len(hw) - len(rw))
		if bestDiff == -1 || d < bestDiff || d == bestDiff && len(rw) < refLen {
			bestDiff, refLen = d, len(rw)
		}
	}
	st.HypLen += len(hw)
	st.RefLen += refLen
	for o, m := range wordNgrams(hw) {
		for g, n := range m {
			st.Total[o] += n
			st.Correct[o] += min(n, refMax[o][g])
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// wordNgrams counts the n-grams of words for n = 1..maxOrder (index n-1), words joined
// by a space (no word holds one).
func wordNgrams(words []string) [maxOrder]map[string]int {
	var out [maxOrder]map[string]int
	for n := 1; n <= maxOrder; n++ {
		m := map[string]int{}
		for i := 0; i+n <= len(words); i++ {
			m[strings.Join(words[i:i+n], " ")]++
		}
		out[n-1] = m
	}
	return out
}

// words pre-processes and tokenises s as sacrebleu does: lowercase if asked, trailing
// whitespace trimmed, then the tokenizer.
func (b BLEU) words(s string) []string {
	if b.Lowercase {
		s = strings.ToLower(s)
	}
	s = strings.TrimRightFunc(s, isPySpace)
	if b.Tokenize == Tokenize13a {
		s = tokenize13a(s)
	}
	return strings.Fields(s)
}

// isPySpace is Python's str.isspace for the characters rstrip removes.
func isPySpace(r rune) bool {
	return r == ' ' || r >= '\t' && r <= '\r' || r >= 0x1c && r <= 0x1f || r == 0x85 || r == 0xa0 ||
		r == 0x1680 || r >= 0x2000 && r <= 0x200a || r == 0x2028 || r == 0x2029 || r == 0x202f ||
		r == 0x205f || r == 0x3000
}

// The 13a tokenizer's regular expressions (sacrebleu/tokenizers/tokenizer_re.py).
var (
	re13aPunct   = regexp.MustCompile("([\\{-\\~\\[-\\` -\\&\\(-\\+\\:-\\@\\/])")
	re13aPeriodA = regexp.MustCompile(`([^0-9])([\.,])`)
	re13aPeriodB = regexp.MustCompile(`([\.,])([^0-9])`)
	re13aDash    = regexp.MustCompile(`([0-9])(-)`)
	newlines13a  = strings.NewReplacer("-\n", "", "\n", " ")
)

// tokenize13a is sacrebleu's Tokenizer13a (sacrebleu/tokenizers/tokenizer_13a.py).
func tokenize13a(s string) string {
	s = strings.ReplaceAll(s, "<skipped>", "")
	s = newlines13a.Replace(s)
	s = unescapeInOrder(s)
	s = " " + s + " "
	s = re13aPunct.ReplaceAllString(s, " $1 ")
	s = re13aPeriodA.ReplaceAllString(s, "$1 $2 ")
	s = re13aPeriodB.ReplaceAllString(s, " $1 $2")
	s = re13aDash.ReplaceAllString(s, "$1 $2 ")
	return s
}

// unescapeInOrder applies the four replacements one after the other, as Python's chained
// str.replace calls do ("&amp;lt;" becomes "<"), not in one pass.
func unescapeInOrder(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	for _, p := range [][2]string{{"&quot;", `"`}, {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}} {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	return s
}

// Score returns BLEU (0..100) from sufficient statistics (sacrebleu's compute_bleu).
func (b BLEU) Score(st BLEUStats) float64 {
	bp := 1.0
	if st.HypLen < st.RefLen {
		bp = 0
		if st.HypLen > 0 {
			bp = math.Exp(1 - float64(st.RefLen)/float64(st.HypLen))
		}
	}
	if st.Correct == [maxOrder]int{} {
		return 0
	}
	var prec [maxOrder]float64
	smooth, eff := 1.0, maxOrder
	for n := range maxOrder {
		if st.Total[n] == 0 {
			break
		}
		if b.EffectiveOrder {
			eff = n + 1
		}
		switch {
		case st.Correct[n] > 0:
			prec[n] = 100 * float64(st.Correct[n]) / float64(st.Total[n])
		case b.Smooth == SmoothExp:
			smooth *= 2
			prec[n] = 100 / (smooth * float64(st.Total[n]))
		case b.Smooth == SmoothFloor:
			prec[n] = 100 * b.Floor / float64(st.Total[n])
		}
	}
	sum := 0.0
	for _, p := range prec[:eff] {
		sum += myLog(p)
	}
	return bp * math.Exp(sum/float64(eff))
}

// myLog is sacrebleu's my_log: log, with a huge negative number for 0.
func myLog(x float64) float64 {
	if x <= 0 {
		return -9999999999
	}
	return math.Log(x)
}
