package translate

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRampInConfig: a "ramp" section in an engine's profile reads into Profile.Ramp, every
// field by its snake_case name, and writes back the same.
func TestRampInConfig(t *testing.T) {
	registerTestTypes()
	cfg, err := ParseConfig([]byte(`{"engines":[{"name":"a","type":"cfgtest"},{"name":"b","type":"cfgtest","profile":{"canary":1,
	  "ramp":{"steps":[1,10,100],"min_requests":50,"step_every":"30s","max_error_rate_delta":0.02,"min_quality_ratio":0.9,"max_latency_ratio":2}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, p, err := cfg.Engines[1].Build()
	if err != nil {
		t.Fatal(err)
	}
	want := &Ramp{Steps: []float64{1, 10, 100}, MinRequests: 50, StepEvery: 30 * time.Second, MaxErrorRateDelta: 0.02,
		MinQualityRatio: 0.9, MaxLatencyRatio: 2}
	if d := cmp.Diff(want, p.Ramp); d != "" {
		t.Errorf("Profile.Ramp (-want +got):\n%s", d)
	}
	out, err := cfg.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"ramp":{"max_error_rate_delta":0.02,"max_latency_ratio":2,"min_quality_ratio":0.9,"min_requests":50,"step_every":"30s","steps":[1,10,100]}`) &&
		!strings.Contains(string(out), `"ramp":{"steps":[1,10,100],"min_requests":50,"step_every":"30s","max_error_rate_delta":0.02,"min_quality_ratio":0.9,"max_latency_ratio":2}`) {
		t.Errorf("MarshalJSON wrote %s", out)
	}
}

// TestRampRules: New and ParseConfig reject the same bad ramps, naming the field (and
// the JSON path); the ranges are checked by TestEveryNewRuleInConfig through limits.
func TestRampRules(t *testing.T) {
	registerTestTypes()
	ramp := func(r Ramp) []Option { return profileOpts(Profile{Ramp: &r}) }
	eleven := make([]float64, 11)
	for i := range eleven {
		eleven[i] = float64(i + 1)
	}
	for _, r := range []newRule{
		{opts: ramp(Ramp{Steps: []float64{5, 1}}), newMsg: "config: WithEngine[1].Profile.Ramp.Steps[1] must be above the step before",
			prof: true, json: `"ramp":{"steps":[5,1]}`, path: "engines[1].profile.ramp.steps[1]: must be above the step before"},
		{opts: ramp(Ramp{Steps: []float64{5, 5}}), newMsg: "config: WithEngine[1].Profile.Ramp.Steps[1] must be above the step before",
			prof: true, json: `"ramp":{"steps":[5,5]}`, path: "engines[1].profile.ramp.steps[1]: must be above the step before"},
		{opts: ramp(Ramp{Steps: []float64{0, 5}}), newMsg: "config: WithEngine[1].Profile.Ramp.Steps[0] must be above 0 and at most 100",
			prof: true, json: `"ramp":{"steps":[0,5]}`, path: "engines[1].profile.ramp.steps[0]: must be above 0 and at most 100"},
		{opts: ramp(Ramp{Steps: []float64{5, 101}}), newMsg: "config: WithEngine[1].Profile.Ramp.Steps[1] must be above 0 and at most 100",
			prof: true, json: `"ramp":{"steps":[5,101]}`, path: "engines[1].profile.ramp.steps[1]: must be above 0 and at most 100"},
		{opts: ramp(Ramp{Steps: eleven}), newMsg: "config: WithEngine[1].Profile.Ramp.Steps must have at most 10 steps",
			prof: true, json: `"ramp":{"steps":[1,2,3,4,5,6,7,8,9,10,11]}`, path: "engines[1].profile.ramp.steps: must have at most 10 steps"},
		{opts: ramp(Ramp{MinRequests: -1}), newMsg: "config: WithEngine[1].Profile.Ramp.MinRequests must not be negative",
			prof: true, json: `"ramp":{"min_requests":-1}`, path: "engines[1].profile.ramp.min_requests: must not be negative"},
		{opts: ramp(Ramp{MaxLatencyRatio: 0.5}), newMsg: "config: WithEngine[1].Profile.Ramp.MaxLatencyRatio must be within 1..100",
			prof: true, json: `"ramp":{"max_latency_ratio":0.5}`, path: "engines[1].profile.ramp.max_latency_ratio: must be within 1..100"},
	} {
		checkNewRule(t, r)
	}
	for _, c := range []struct{ json, msg string }{
		{`"ramp":null`, "engines[1].profile.ramp: must not be null"},
		{`"ramp":{"step":[1]}`, "engines[1].profile.ramp.step: unknown field"},
		{`"ramp":{"steps":"1,5"}`, "engines[1].profile.ramp.steps: must be an array"},
	} {
		_, err := ParseConfig([]byte(newRule{prof: true, json: c.json}.file()))
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseConfig(%s) = %v, want %q", c.json, err, c.msg)
		}
	}
}

// TestRampStartsWhereTheProfileSays: a Ramp starts at Canary, at the first step when
// Canary is 0, and not at all on a staged engine at 0 ("canary": 0 in a file).
func TestRampStartsWhereTheProfileSays(t *testing.T) {
	for _, c := range []struct {
		p    Profile
		want float64
	}{
		{Profile{Ramp: &Ramp{}}, 1},
		{Profile{Canary: 5, Ramp: &Ramp{}}, 5},
		{Profile{Canary: 3, Ramp: &Ramp{Steps: []float64{2, 50}}}, 3},
		{Profile{Staged: true, Ramp: &Ramp{}}, 0},
	} {
		c0, err := New(WithEngine(&cfgEngine{name: "a"}, Profile{}), WithEngine(&cfgEngine{name: "b"}, c.p))
		if err != nil {
			t.Fatal(err)
		}
		if got := c0.Engines()[1].Canary; got != c.want {
			t.Errorf("%+v: share %v, want %v", c.p, got, c.want)
		}
		c0.Close()
	}
}
