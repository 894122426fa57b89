package eval

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
)

// reportFixture is a set of four items on two pairs and the outputs of two engines: "good"
// answers every item with its reference, "poor" garbles them and fails one.
func reportFixture() ([]Item, []Output) {
	set := []Item{
		{ID: "1", Source: "en", Target: "es", Text: "The house is red.", Refs: []string{"La casa es roja."}},
		{ID: "2", Source: "en", Target: "es", Scene: "legal", Text: "The contract ends today.", Refs: []string{"El contrato termina hoy."}},
		{ID: "3", Source: "en", Target: "ca", Text: "The house is red.", Refs: []string{"La casa és vermella."}},
		{ID: "4", Source: "en", Target: "ca", Text: "I have a dog.", Refs: []string{"Tinc un gos."}},
	}
	var outs []Output
	for _, it := range set {
		outs = append(outs, Output{Item: it.ID, Engine: "good", Text: it.Refs[0], Cost: 0.5})
		if it.ID == "4" {
			outs = append(outs, Output{Item: it.ID, Engine: "poor", Err: "translate: unavailable"})
			continue
		}
		outs = append(outs, Output{Item: it.ID, Engine: "poor", Text: Garble(it.Refs[0])})
	}
	return set, outs
}

func TestReportTableAndJSON(t *testing.T) {
	set, outs := reportFixture()
	r := NewReport(set, []string{"good", "poor"}, outs)
	var b strings.Builder
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	want := `   pair    scene  engine  items  errors   chrF2    BLEU  judge    cost
  en-ca        *    good      2       0  100.00  100.00      -  1.0000
  en-ca        *    poor      2       1   24.03   14.06      -  0.0000
  en-ca  general    good      2       0  100.00  100.00      -  1.0000
  en-ca  general    poor      2       1   24.03   14.06      -  0.0000
  en-es        *    good      2       0  100.00  100.00      -  1.0000
  en-es        *    poor      2       0   20.87    7.99      -  0.0000
  en-es  general    good      1       0  100.00  100.00      -  0.5000
  en-es  general    poor      1       0   25.13   14.06      -  0.0000
  en-es    legal    good      1       0  100.00  100.00      -  0.5000
  en-es    legal    poor      1       0   18.33   12.70      -  0.0000
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	data, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, &back); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
}

func TestReportPairQualityAndConfig(t *testing.T) {
	set, outs := reportFixture()
	r := NewReport(set, []string{"good", "poor"}, outs)
	want := map[string]map[string]float64{
		"good": {"en-ca": 100, "en-es": 100, "en-es/legal": 100},
		"poor": {"en-ca": 24.03, "en-es": 20.87, "en-es/legal": 18.33},
	}
	if diff := cmp.Diff(want, r.PairQuality(MetricChrF)); diff != "" {
		t.Errorf("PairQuality (-want +got):\n%s", diff)
	}
	data, err := r.ConfigJSON(MetricChrF)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Engines []struct {
			Name    string
			Profile struct {
				PairQuality map[string]float64 `json:"pair_quality"`
			}
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Engines) != 2 || doc.Engines[1].Name != "poor" ||
		!cmp.Equal(doc.Engines[1].Profile.PairQuality, want["poor"]) {
		t.Errorf("ConfigJSON = %s (%v), want both engines with their pair_quality", data, err)
	}
	// Loaded into a configuration file's Config, the figures are valid and route.
	all.Register()
	cfg, err := translate.ParseConfig([]byte(`{"engines":[{"name":"good","type":"fake"},{"name":"poor","type":"fake"},{"name":"other","type":"fake"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Apply(cfg, MetricChrF); !cmp.Equal(got, []string{"good", "poor"}) {
		t.Errorf("Apply changed %v, want good and poor", got)
	}
	c, err := translate.New(translate.WithConfig(cfg))
	if err != nil {
		t.Fatalf("New with the applied figures: %v", err)
	}
	c.Close()
	out, err := cfg.MarshalJSON()
	if err != nil || !bytes.Contains(out, []byte(`"pair_quality":{"en-ca":24.03,"en-es":20.87,"en-es/legal":18.33}`)) {
		t.Errorf("the Config written back = %s (%v), want poor's pair_quality in it", out, err)
	}
}

// The chart is a well-formed SVG document with one bar per engine and pair, as tall as
// the score.
func TestReportSVG(t *testing.T) {
	set, outs := reportFixture()
	r := NewReport(set, []string{"good", "poor", "<none>"}, outs)
	var b bytes.Buffer
	if err := r.WriteSVG(&b, MetricChrF); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	dec := xml.NewDecoder(&b)
	var bars []string
	var root string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, b.String())
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Local
		}
		if se.Name.Local == "rect" && attr(se, "height") != "12" && attr(se, "fill") != "white" {
			bars = append(bars, attr(se, "fill")+" "+attr(se, "height"))
		}
	}
	// 300 px is 100 points.
	want := []string{"#0072B2 300.0", "#E69F00 72.1", "#0072B2 300.0", "#E69F00 62.6"} // en-ca, en-es: 24.03, 20.87
	if root != "svg" || !cmp.Equal(bars, want) {
		t.Errorf("root %q, bars %v; want svg and %v", root, bars, want)
	}
	if !strings.Contains(doc, "&lt;none&gt;") {
		t.Error("the engine name <none> is not escaped in the legend")
	}
}

func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}
