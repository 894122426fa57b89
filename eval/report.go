package eval

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"github.com/fanyi-go/translate"
)

// AllScenes is the Scene of a Score over every scene of its pair.
const AllScenes = "*"

// Score is one engine's scores on one language pair and scene of a set. A plain value.
type Score struct {
	Engine string  `json:"engine"`
	Pair   string  `json:"pair"`  // "en-es"
	Scene  string  `json:"scene"` // a scene's name, or AllScenes
	Items  int     `json:"items"` // items of the pair and scene
	Errors int     `json:"errors"`
	ChrF   float64 `json:"chrf"` // corpus chrF2 over the items answered
	BLEU   float64 `json:"bleu"` // corpus BLEU over the items answered
	// Judge is the mean judge score over the items judged (Judged of them); 0 when none.
	Judge  float64 `json:"judge,omitempty"`
	Judged int     `json:"judged,omitempty"`
	Cost   float64 `json:"cost"` // credits spent on the items
}

// Report is a run's scores: per engine, pair and scene, and per engine and pair over all
// scenes (Scene AllScenes), sorted by pair, scene (AllScenes first), then engine. A plain
// value, safe to read from several goroutines; build one with NewReport.
type Report struct {
	Engines []string `json:"engines"`
	Scores  []Score  `json:"scores"`
}

// group is the items and outputs of one engine, pair and scene.
type group struct {
	hyps   []string
	refs   [][]string
	s      Score
	judged float64
}

// NewReport scores outs (Run's outputs) against set. Outputs of items or engines not in
// set and engines are ignored; an item an engine failed counts in Errors and not in its
// metrics.
func NewReport(set []Item, engines []string, outs []Output) *Report {
	byItem := make(map[string]*Item, len(set))
	for i := range set {
		byItem[set[i].ID] = &set[i]
	}
	groups := map[[3]string]*group{}
	add := func(key [3]string, it *Item, o Output) {
		g := groups[key]
		if g == nil {
			g = &group{s: Score{Engine: key[0], Pair: key[1], Scene: key[2]}}
			groups[key] = g
		}
		g.s.Items++
		g.s.Cost += o.Cost
		if o.Err != "" {
			g.s.Errors++
			return
		}
		g.hyps, g.refs = append(g.hyps, o.Text), append(g.refs, it.Refs)
		if o.Judge != nil {
			g.judged += *o.Judge
			g.s.Judged++
		}
	}
	for _, o := range outs {
		it := byItem[o.Item]
		if it == nil || !slices.Contains(engines, o.Engine) {
			continue
		}
		add([3]string{o.Engine, it.Pair(), it.scene()}, it, o)
		add([3]string{o.Engine, it.Pair(), AllScenes}, it, o)
	}
	r := &Report{Engines: slices.Clone(engines)}
	for _, g := range groups {
		if len(g.hyps) > 0 {
			g.s.ChrF = round2(ChrF{}.Corpus(g.hyps, g.refs))
			g.s.BLEU = round2(BLEU{}.Corpus(g.hyps, g.refs))
		}
		if g.s.Judged > 0 {
			g.s.Judge = round2(g.judged / float64(g.s.Judged))
		}
		r.Scores = append(r.Scores, g.s)
	}
	slices.SortFunc(r.Scores, func(a, b Score) int {
		return cmp.Or(cmp.Compare(a.Pair, b.Pair), compareScene(a.Scene, b.Scene),
			cmp.Compare(slices.Index(engines, a.Engine), slices.Index(engines, b.Engine)))
	})
	return r
}

// compareScene orders AllScenes first, then scenes in translate.Scene order.
func compareScene(a, b string) int {
	rank := func(s string) int {
		if sc, ok := parseScene(s); ok {
			return int(sc) + 1
		}
		return 0
	}
	return cmp.Compare(rank(a), rank(b))
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// Find returns the score of engine on pair and scene, and whether there is one.
func (r *Report) Find(engine, pair, scene string) (Score, bool) {
	i := slices.IndexFunc(r.Scores, func(s Score) bool { return s.Engine == engine && s.Pair == pair && s.Scene == scene })
	if i < 0 {
		return Score{}, false
	}
	return r.Scores[i], true
}

// WriteTable writes the scores as an aligned table: one row per pair, scene and engine.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "pair\tscene\tengine\titems\terrors\tchrF2\tBLEU\tjudge\tcost\t")
	for _, s := range r.Scores {
		judge := "-"
		if s.Judged > 0 {
			judge = fmt.Sprintf("%.1f (%d)", s.Judge, s.Judged)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%.2f\t%.2f\t%s\t%.4f\t\n", s.Pair, s.Scene, s.Engine, s.Items, s.Errors, s.ChrF, s.BLEU, judge, s.Cost)
	}
	return tw.Flush()
}

// JSON returns the report as indented JSON.
func (r *Report) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

// Metric names the figure PairQuality takes from a Score.
type Metric string

// Metrics.
const (
	MetricChrF  Metric = "chrf"
	MetricBLEU  Metric = "bleu"
	MetricJudge Metric = "judge"
)

func (m Metric) of(s Score) (float64, bool) {
	switch m {
	case MetricBLEU:
		return s.BLEU, true
	case MetricJudge:
		return s.Judge, s.Judged > 0
	}
	return s.ChrF, true
}

// PairQuality returns, per engine, the quality figures for Profile.PairQuality: the metric
// per pair ("en-es", over every scene of the pair), and per pair and scene ("en-es/legal")
// for each scene other than general that the set has items of. Pairs an engine answered no
// item of are left out. The figures are the metric's own scale: an engine measured on a
// pair is compared there with engines that are measured too, so measure every engine that
// serves a pair; and LegalMinQuality (default 90) applies to a legal key as to any quality.
func (r *Report) PairQuality(m Metric) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for _, s := range r.Scores {
		v, ok := m.of(s)
		if !ok || s.Items == s.Errors || s.Scene == translate.SceneGeneral.String() {
			continue
		}
		key := s.Pair
		if s.Scene != AllScenes {
			key += "/" + s.Scene
		}
		if out[s.Engine] == nil {
			out[s.Engine] = map[string]float64{}
		}
		out[s.Engine][key] = v
	}
	return out
}

// ConfigJSON returns the figures of PairQuality(m) in a configuration file's form, an
// "engines" list of names and profiles to paste into the file (each "pair_quality" object
// into the engine's "profile"); Apply loads them into a parsed Config instead.
func (r *Report) ConfigJSON(m Metric) ([]byte, error) {
	type profile struct {
		PairQuality map[string]float64 `json:"pair_quality"`
	}
	type engine struct {
		Name    string  `json:"name"`
		Profile profile `json:"profile"`
	}
	pq := r.PairQuality(m)
	doc := struct {
		Engines []engine `json:"engines"`
	}{Engines: []engine{}}
	for _, e := range r.Engines {
		if pq[e] != nil {
			doc.Engines = append(doc.Engines, engine{e, profile{pq[e]}})
		}
	}
	return json.MarshalIndent(doc, "", "  ")
}

// Apply sets Profile.PairQuality of cfg's engines to the figures of PairQuality(m),
// replacing what they had, and returns the names of the engines it changed. Engines the
// report does not measure keep their profile.
func (r *Report) Apply(cfg *translate.Config, m Metric) []string {
	pq := r.PairQuality(m)
	var changed []string
	for i := range cfg.Engines {
		ec := &cfg.Engines[i]
		if q, ok := pq[ec.Name]; ok {
			ec.Profile.PairQuality = q
			changed = append(changed, ec.Name)
		}
	}
	return changed
}
