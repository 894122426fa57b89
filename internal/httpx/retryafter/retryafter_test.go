package retryafter

import (
	"net/http"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestHeader(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		" 3 ":                           3 * time.Second,
		"0":                             0,
		"1.5":                           1500 * time.Millisecond,
		"300":                           Max,
		"301":                           Max,
		"9223372037":                    Max, // once -2562047h
		"99999999999999999999999999999": Max,
		"1e300":                         0,
		"1E3":                           0,
		"NaN":                           0,
		"Inf":                           0,
		"+Inf":                          0,
		"-1":                            0,
		"+5":                            0,
		"0x10":                          0,
		"1.":                            0,
		".5":                            0,
		"1_000":                         0,
		"soon":                          0,
		now.Add(90 * time.Second).Format(http.TimeFormat):     90 * time.Second,
		now.Add(-90 * time.Second).Format(http.TimeFormat):    0,
		now.Add(24 * 365 * time.Hour).Format(http.TimeFormat): Max,
		"Fri, 31 Dec 9999 23:59:59 GMT":                       Max,
		"Mon, 01 Jan 0001 00:00:00 GMT":                       0,
	} {
		if got := Header(in, now); got != want {
			t.Errorf("Header(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestMillis(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"": 0, "250": 250 * time.Millisecond, "1.5": 1500 * time.Microsecond,
		"300000": Max, "300001": Max, "9223372036854775807": Max, "NaN": 0, "-5": 0, "1e9": 0,
	} {
		if got := Millis(in); got != want {
			t.Errorf("Millis(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestReset(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"": 0, "1s": time.Second, "6m0s": 6 * time.Minute, "20ms": 20 * time.Millisecond,
		"1h2m3.5s": time.Hour + 2*time.Minute + 3500*time.Millisecond, "30": 30 * time.Second,
		"-1s": 0, "+1s": 0, "garbage": 0, "9999999999h": 0, "1e3s": 0, "NaN": 0,
	} {
		if got := Reset(in, 24*time.Hour); got != want {
			t.Errorf("Reset(%q) = %v, want %v", in, got, want)
		}
	}
	if got := Reset("2h", 0); got != Max {
		t.Errorf("Reset(2h, 0) = %v, want Max", got)
	}
}

func TestClamp(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{
		-time.Hour: 0, 0: 0, time.Second: time.Second, time.Hour: Max, 1<<63 - 1: Max,
	} {
		if got := Clamp(in); got != want {
			t.Errorf("Clamp(%v) = %v, want %v", in, got, want)
		}
	}
}

// FuzzRetryAfter checks that no header value parses outside [0, Max] or panics.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "3", "1.5", "9223372037", "1e300", "NaN", "Inf", "-1",
		"Wed, 21 Oct 2015 07:28:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT", "1s", "6m0s", "20ms",
		"99999999999999999999.99999999999999", "0.0000000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, d := range []time.Duration{Header(v, now), Millis(v), Reset(v, 0), Reset(v, time.Hour)} {
			if d < 0 || d > time.Hour {
				t.Fatalf("%q parsed to %v", v, d)
			}
		}
		if d := Header(v, now); d > Max {
			t.Fatalf("Header(%q) = %v over Max", v, d)
		}
	})
}
