// Package ranges checks numeric settings against a table of documented ranges. The
// translate package keeps the table (the ranges are policy: each field's doc comment states
// its range); this package reads struct fields by reflection and writes a range as the doc
// comments do ("1..10000", "0..1e6", "100ms..1h").
package ranges

import (
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Limit is the documented range of a numeric setting: Lo..Hi, and 0 too when Zero (zero
// means the setting's default). Durations are in nanoseconds.
type Limit struct {
	Lo, Hi float64
	Zero   bool
}

var durationType = reflect.TypeFor[time.Duration]()

// Check returns the first numeric field of the struct v outside its range in table, which
// holds the ranges by "Type.Field" (the Go names), and why. It allocates nothing.
func Check[L ~struct {
	Lo, Hi float64
	Zero   bool
}](v any, table map[string]L) (field, msg string) {
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	for i := range rt.NumField() {
		tl, ok := table[rt.Name()+"."+rt.Field(i).Name]
		if !ok {
			continue
		}
		l := Limit(tl)
		var x float64
		switch f := rv.Field(i); f.Kind() {
		case reflect.Float64:
			x = f.Float()
		default:
			x = float64(f.Int())
		}
		switch {
		case x == 0 && l.Zero, x >= l.Lo && x <= l.Hi:
			continue
		case x < 0 && l.Lo >= 0:
			return rt.Field(i).Name, "must not be negative"
		}
		return rt.Field(i).Name, "must be within " + l.String(rt.Field(i).Type == durationType)
	}
	return "", ""
}

// String writes the range as the doc comments do: "1..10000", "0..1e6", "100ms..1h".
func (l Limit) String(dur bool) string {
	if !dur {
		f := func(x float64) string {
			if x >= 1e6 {
				m, e, _ := strings.Cut(strconv.FormatFloat(x, 'e', -1, 64), "e+")
				return m + "e" + strings.TrimLeft(e, "0")
			}
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
		return f(l.Lo) + ".." + f(l.Hi)
	}
	return shortDuration(time.Duration(l.Lo)) + ".." + shortDuration(time.Duration(l.Hi))
}

// shortDuration writes d without its zero minutes and seconds: "1h", "5m", "8760h".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
