package jsonfile

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Enum is the codec of an unsigned integer type whose values are written by name: value i
// is names[i]. A value that is not a name is an error saying decodeMsg; a value with no
// name cannot be written, an error saying appendMsg.
func (f *Format) Enum(names []string, decodeMsg, appendMsg string) Codec {
	return Codec{
		Decode: func(path string, raw []byte, v reflect.Value) error {
			var s string
			if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
				if i := slices.Index(names, s); i >= 0 {
					v.SetUint(uint64(i))
					return nil
				}
			}
			return f.Invalid(path, decodeMsg)
		},
		Append: func(b []byte, path string, v reflect.Value) ([]byte, error) {
			if v.Uint() >= uint64(len(names)) {
				return nil, f.Invalid(path, appendMsg)
			}
			return strconv.AppendQuote(b, names[v.Uint()]), nil
		},
	}
}

// EnumKeys is the key codec of an unsigned integer type whose values are written by name,
// value i as names[i] and in that order, a noun ("scene") naming them in errors: "unknown
// scene (known: general, tech)" for a key that is not a name, "unknown scene scene(7)" for
// a value with no name.
func (f *Format) EnumKeys(noun string, names []string) KeyCodec {
	return KeyCodec{
		Parse: func(path, key string, k reflect.Value) error {
			i := slices.Index(names, key)
			if i < 0 {
				return f.Invalid(path, "unknown "+noun+" (known: "+strings.Join(names, ", ")+")")
			}
			k.SetUint(uint64(i))
			return nil
		},
		Name: func(path string, k reflect.Value) (string, int, error) {
			if k.Uint() >= uint64(len(names)) {
				return "", 0, f.Invalid(path, "unknown "+noun+" "+noun+"("+strconv.FormatUint(k.Uint(), 10)+")")
			}
			return names[k.Uint()], int(k.Uint()), nil
		},
	}
}

// Given is the codec of a struct type whose field at index field, itself a struct, is
// written in part. Decode decodes the struct and, when the object has the field, calls set
// with the bits of the field's fields that the file gave (bit i: field i). Append writes
// the field's fields that are not zero or whose bits get reports, and leaves the field out
// when there are none.
func (f *Format) Given(field int, get func(v reflect.Value) uint64, set func(v reflect.Value, given uint64)) Codec {
	return Codec{
		Decode: func(path string, raw []byte, v reflect.Value) error {
			if _, err := f.DecodeStruct(path, raw, v); err != nil {
				return err
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(raw, &obj); err != nil {
				return f.Invalid(path, "must be an object")
			}
			key := fieldKey(v.Type().Field(field))
			if p, ok := obj[key]; ok {
				given, err := f.DecodeStruct(Join(path, key), p, reflect.New(v.Field(field).Type()).Elem())
				if err != nil {
					return err
				}
				set(v, given)
			}
			return nil
		},
		Append: func(b []byte, path string, v reflect.Value) ([]byte, error) {
			return f.appendGiven(b, path, v, field, get(v))
		},
	}
}

// appendGiven writes the struct v with the fields of its field at index field that are not
// zero or whose bits given has, and without that field when there are none.
func (f *Format) appendGiven(b []byte, path string, v reflect.Value, field int, given uint64) ([]byte, error) {
	return f.AppendStruct(b, path, v, func(i int, at string, fv reflect.Value) ([]byte, bool, error) {
		if i != field {
			return nil, false, nil
		}
		out, err := f.AppendStruct(nil, at, fv, func(i int, at string, fv reflect.Value) ([]byte, bool, error) {
			if given&(1<<i) == 0 {
				return nil, false, nil
			}
			out, err := f.Append(nil, at, fv)
			return out, true, err
		})
		if err != nil || string(out) == "{}" {
			return nil, true, err
		}
		return out, true, nil
	})
}

// Overlay sets each field i of the struct dst (settable) to src's field i when given has
// bit i or src's field is not zero.
func Overlay(dst, src reflect.Value, given uint64) {
	for i := range src.NumField() {
		if given&(1<<i) != 0 || !src.Field(i).IsZero() {
			dst.Field(i).Set(src.Field(i))
		}
	}
}

// Env returns settings with each value "env:NAME" replaced by the value of the environment
// variable NAME, in a new map (settings itself when it is empty), and key "". A problem
// returns the first key, in sorted order, whose value cannot be resolved, and why: a
// variable name that is missing, or a variable that is not set or empty. The why never
// holds a value.
func Env(settings map[string]string) (resolved map[string]string, key, problem string) {
	if len(settings) == 0 {
		return settings, "", ""
	}
	m := make(map[string]string, len(settings))
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := settings[k]
		if name, ok := strings.CutPrefix(v, "env:"); ok {
			if name == "" || strings.ContainsAny(name, "=\x00") {
				return nil, k, "\"env:\" needs a variable name"
			}
			val, set := os.LookupEnv(name)
			switch {
			case !set:
				return nil, k, "environment variable " + name + " is not set"
			case val == "":
				return nil, k, "environment variable " + name + " is empty"
			}
			v = val
		}
		m[k] = v
	}
	return m, "", ""
}

// Relabel turns an error message that names a Go field, prefix then "RetryPolicy.PerEngine
// must not be negative", into the field's JSON path under section and the rest:
// "retry.per_engine" and "must not be negative" (the Go type name is dropped, each field
// name after it is in snake_case). A message with no space after prefix is all rest, at
// section, prefix kept.
func Relabel(section, prefix, message string) (path, rest string) {
	field, rest, ok := strings.Cut(strings.TrimPrefix(message, prefix), " ")
	if !ok {
		return section, message
	}
	path = section
	if _, sub, ok := strings.Cut(field, "."); ok {
		for _, part := range strings.Split(sub, ".") {
			path += "." + Snake(part)
		}
	}
	return path, rest
}
