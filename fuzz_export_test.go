package translate

import (
	"reflect"
	"sort"
	"strings"

	"github.com/fanyi-go/translate/internal/jsonfile"
)

// NumericSetting is a numeric setting as a configuration file names it, with its range, for
// FuzzConfig: Path is "deadline", "breaker.window" or, for an engine's profile,
// "profile.quality"; Kind is 'i' (an integer), 'f' (a number) or 'd' (a duration).
type NumericSetting struct {
	Path   string
	Kind   byte
	Lo, Hi float64
}

// NumericSettingsForTest lists every setting of limits, by path.
func NumericSettingsForTest() []NumericSetting {
	sections := map[string]string{"Config": "", "CacheConfig": "cache.", "Budget": "budget.", "RetryPolicy": "retry.",
		"BreakerPolicy": "breaker.", "RoutingPolicy": "routing.", "ProbePolicy": "probes.", "Profile": "profile."}
	var out []NumericSetting
	for key, l := range limits {
		typ, field, _ := strings.Cut(key, ".")
		s := NumericSetting{Path: sections[typ] + jsonfile.Snake(field), Kind: 'i', Lo: l.Lo, Hi: l.Hi}
		switch f := limitField(key); {
		case f.Type == durationType:
			s.Kind = 'd'
		case f.Type.Kind() == reflect.Float64:
			s.Kind = 'f'
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
