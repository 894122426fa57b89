package jsonfile

import "testing"

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"FailureRatio": "failure_ratio", "TTL": "ttl", "HalfOpenCalls": "half_open_calls",
		"PerScene": "per_scene", "Quality": "quality", "CostPerMillion": "cost_per_million", "HTTPTimeout": "http_timeout"} {
		if got := Snake(in); got != want {
			t.Errorf("Snake(%q) = %q, want %q", in, got, want)
		}
	}
}
