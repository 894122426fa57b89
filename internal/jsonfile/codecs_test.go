package jsonfile

import (
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pathError is the test Format's error: the JSON path and the message.
type pathError struct{ Path, Msg string }

func (e *pathError) Error() string { return e.Path + ": " + e.Msg }

type color uint8

type inner struct {
	A int
	B string
	C bool
}

type outer struct {
	Name  string
	Inner inner
	bits  uint64
}

type doc struct {
	Color  color
	Colors map[color]int
	Items  []outer
}

func testFormat() *Format {
	f := &Format{Invalid: func(path, msg string) error { return &pathError{path, msg} }}
	names := []string{"red", "green", "blue"}
	f.Types = map[reflect.Type]Codec{
		reflect.TypeFor[color](): f.Enum(names, "must be a color", "unknown color"),
		reflect.TypeFor[outer](): f.Given(FieldIndex(reflect.TypeFor[outer](), "Inner"),
			func(v reflect.Value) uint64 { return v.Field(2).Uint() },
			func(v reflect.Value, given uint64) { v.Addr().Interface().(*outer).bits = given }),
	}
	f.Keys = map[reflect.Type]KeyCodec{reflect.TypeFor[color](): f.EnumKeys("color", names)}
	return f
}

func asPathError(err error) *pathError {
	var pe *pathError
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}

func TestCodecsDecode(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    doc
		wantErr *pathError
	}{
		{in: `{"color":"blue","colors":{"green":2,"red":1}}`,
			want: doc{Color: 2, Colors: map[color]int{0: 1, 1: 2}}},
		{in: `{"items":[{"name":"a","inner":{"a":0,"c":true}},{"name":"b"}]}`,
			want: doc{Items: []outer{{Name: "a", Inner: inner{C: true}, bits: 1<<0 | 1<<2}, {Name: "b"}}}},
		{in: `{"items":[{"inner":{}}]}`, want: doc{Items: []outer{{}}}},
		{in: `{"color":"red","colors":{"red":0}}`, want: doc{Colors: map[color]int{0: 0}}},
		{in: `{"color":"pink"}`, wantErr: &pathError{"color", "must be a color"}},
		{in: `{"color":1}`, wantErr: &pathError{"color", "must be a color"}},
		{in: `{"colors":{"pink":1}}`, wantErr: &pathError{"colors.pink", "unknown color (known: red, green, blue)"}},
		{in: `{"items":[{"inner":{"d":1}}]}`, wantErr: &pathError{"items[0].inner.d", "unknown field (known: a, b, c)"}},
		{in: `{"items":[{"inner":{"a":"x"}}]}`, wantErr: &pathError{"items[0].inner.a", "must be an integer"}},
		{in: `{"items":[{"inner":[]}]}`, wantErr: &pathError{"items[0].inner", "must be an object"}},
	} {
		var got doc
		err := testFormat().Document([]byte(tc.in), 1<<10, &got)
		if diff := cmp.Diff(tc.wantErr, asPathError(err)); diff != "" {
			t.Errorf("Document(%s) error (-want +got):\n%s", tc.in, diff)
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(outer{})); err == nil && diff != "" {
			t.Errorf("Document(%s) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestCodecsAppend(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      doc
		want    string
		wantErr *pathError
	}{
		{name: "enums", in: doc{Color: 1, Colors: map[color]int{2: 3, 0: 1}}, want: `{"color":"green","colors":{"red":1,"blue":3}}`},
		{name: "non-zero fields", in: doc{Items: []outer{{Name: "a", Inner: inner{A: 5, B: "x"}, bits: 1 << 0}}},
			want: `{"items":[{"name":"a","inner":{"a":5,"b":"x"}}]}`},
		{name: "given a zero field", in: doc{Items: []outer{{Inner: inner{}, bits: 1<<0 | 1<<2}}},
			want: `{"items":[{"inner":{"a":0,"c":false}}]}`},
		{name: "none given, non-zero", in: doc{Items: []outer{{Name: "a", Inner: inner{A: 5}}}}, want: `{"items":[{"name":"a","inner":{"a":5}}]}`},
		{name: "none given, all zero", in: doc{Items: []outer{{Name: "a", Inner: inner{}}}}, want: `{"items":[{"name":"a"}]}`},
		{name: "unnamed value", in: doc{Color: 3}, wantErr: &pathError{"color", "unknown color"}},
		{name: "unnamed key", in: doc{Colors: map[color]int{7: 1}}, wantErr: &pathError{"colors", "unknown color color(7)"}},
		{name: "first unnamed key", in: doc{Colors: map[color]int{3: 1}}, wantErr: &pathError{"colors", "unknown color color(3)"}},
	} {
		f := testFormat()
		got, err := f.Append(nil, "", reflect.ValueOf(tc.in))
		if diff := cmp.Diff(tc.wantErr, asPathError(err)); diff != "" {
			t.Errorf("%s: error (-want +got):\n%s", tc.name, diff)
			continue
		}
		if err == nil && string(got) != tc.want {
			t.Errorf("%s: Append = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestOverlay(t *testing.T) {
	base := inner{A: 1, B: "base", C: true}
	for _, tc := range []struct {
		name  string
		src   inner
		given uint64
		want  inner
	}{
		{"nothing", inner{}, 0, base},
		{"non-zero fields", inner{A: 2}, 0, inner{A: 2, B: "base", C: true}},
		{"given zero fields", inner{}, 1<<1 | 1<<2, inner{A: 1}},
		{"all", inner{A: 3, B: "b"}, 1 << 2, inner{A: 3, B: "b"}},
	} {
		got := base
		Overlay(reflect.ValueOf(&got).Elem(), reflect.ValueOf(tc.src), tc.given)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("JSONFILE_TEST_KEY", "secret")
	t.Setenv("JSONFILE_TEST_EMPTY", "")
	for _, tc := range []struct {
		name        string
		in          map[string]string
		want        map[string]string
		key, reason string
	}{
		{name: "nil", in: nil, want: nil},
		{name: "plain and env", in: map[string]string{"url": "http://x", "key": "env:JSONFILE_TEST_KEY"},
			want: map[string]string{"url": "http://x", "key": "secret"}},
		{name: "no name", in: map[string]string{"b": "env:", "a": "x"}, key: "b", reason: `"env:" needs a variable name`},
		{name: "bad name", in: map[string]string{"a": "env:A=B"}, key: "a", reason: `"env:" needs a variable name`},
		{name: "not set, first in order", in: map[string]string{"z": "env:", "m": "env:JSONFILE_TEST_UNSET"},
			key: "m", reason: "environment variable JSONFILE_TEST_UNSET is not set"},
		{name: "first problem in key order", in: manyProblems(), key: "a", reason: `"env:" needs a variable name`},
		{name: "empty", in: map[string]string{"k": "env:JSONFILE_TEST_EMPTY"}, key: "k", reason: "environment variable JSONFILE_TEST_EMPTY is empty"},
	} {
		in := map[string]string{}
		for k, v := range tc.in {
			in[k] = v
		}
		got, key, reason := Env(tc.in)
		if key != tc.key || reason != tc.reason {
			t.Errorf("%s: Env problem = %q, %q; want %q, %q", tc.name, key, reason, tc.key, tc.reason)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: Env (-want +got):\n%s", tc.name, diff)
		}
		if tc.in != nil && !cmp.Equal(in, tc.in) {
			t.Errorf("%s: Env changed its argument to %v", tc.name, tc.in)
		}
	}
}

func TestRelabel(t *testing.T) {
	for _, tc := range []struct {
		section, msg, path, rest string
	}{
		{"retry", "config: RetryPolicy.PerEngine must not be negative", "retry.per_engine", "must not be negative"},
		{"profile", "config: Profile.Ramp.MinRequests must be within 1..1e6", "profile.ramp.min_requests", "must be within 1..1e6"},
		{"probes", "config: ProbePolicy must name a target", "probes", "must name a target"},
		{"routing", "config: oops", "routing", "config: oops"},
		{"routing", "no prefix here", "routing", "prefix here"},
	} {
		path, rest := Relabel(tc.section, "config: ", tc.msg)
		if path != tc.path || rest != tc.rest {
			t.Errorf("Relabel(%q, %q) = %q, %q; want %q, %q", tc.section, tc.msg, path, rest, tc.path, tc.rest)
		}
	}
}

// manyProblems are 26 settings that all fail, a to z: Env must report a whatever the
// map's iteration order.
func manyProblems() map[string]string {
	m := map[string]string{}
	for c := 'a'; c <= 'z'; c++ {
		m[string(c)] = "env:"
	}
	return m
}
