// Package jsonfile decodes and encodes the configuration file format of the translate
// package: strict JSON into Go structs by reflection, with snake_case keys (the snake_case
// names of the Go fields, or their json tag), durations as Go duration strings ("8s"),
// and types of the caller's own (enums by name, structs with extra rules) through codecs.
//
// It exists so that the root package keeps what the file means (Config, its checks and
// its error kinds) and leaves how JSON is walked to this package. Decoding is strict: an
// unknown key, a key given twice, null, a wrong type, a fraction for an integer or a
// number out of its field's range is an error naming the JSON path ("engines[0].profile.
// quality"). A "_comment" key (a string or an array of strings) is allowed in any object.
// Encoding writes what decoding reads, leaving out zero values.
//
// A Format is read only after it is built; its methods are safe for concurrent use.
package jsonfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// A Format says how one file format treats the types it does not know by kind.
type Format struct {
	// Invalid makes the error for a problem at a JSON path ("" for the whole document).
	Invalid func(path, msg string) error
	// Types maps a type to its own codec, used in place of the kind's rules.
	Types map[reflect.Type]Codec
	// Keys maps a map key type other than string to its codec.
	Keys map[reflect.Type]KeyCodec
}

// A Codec decodes and encodes the values of one type. Decode is given a trimmed, valid
// JSON value that is not null.
type Codec struct {
	Decode func(path string, raw []byte, v reflect.Value) error
	Append func(b []byte, path string, v reflect.Value) ([]byte, error)
}

// A KeyCodec parses and names the keys of maps of one key type. Name returns the key's
// name and its place in the written order (keys of equal order are sorted by name).
type KeyCodec struct {
	Parse func(path, key string, k reflect.Value) error
	Name  func(path string, k reflect.Value) (name string, order int, err error)
}

var durationType = reflect.TypeFor[time.Duration]()

// Join is the JSON path of key inside path.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Snake converts a Go field name to its JSON key: "FailureRatio" -> "failure_ratio",
// "TTL" -> "ttl".
func Snake(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 && (unicode.IsLower(r[i-1]) || (i+1 < len(r) && unicode.IsLower(r[i+1]))) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// FieldIndex is the index of t's field name, a direct field; it panics when there is none.
func FieldIndex(t reflect.Type, name string) int {
	f, ok := t.FieldByName(name)
	if !ok || len(f.Index) != 1 {
		panic("translate: no field " + t.Name() + "." + name)
	}
	return f.Index[0]
}

// Fields maps the JSON keys of t's exported fields to their indexes, and lists the keys in
// field order.
func Fields(t reflect.Type) (map[string]int, []string) {
	idx := map[string]int{}
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		key := fieldKey(f)
		idx[key] = i
		keys = append(keys, key)
	}
	return idx, keys
}

// fieldKey is the JSON key of a struct field: its json tag's name, or its snake_case name.
func fieldKey(f reflect.StructField) string {
	if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" {
		return tag
	}
	return Snake(f.Name)
}

// Document decodes data, a whole document of at most maxBytes, strictly into v (a pointer).
func (f *Format) Document(data []byte, maxBytes int, v any) error {
	if len(data) > maxBytes {
		return f.Invalid("", "larger than "+sizeName(maxBytes))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return f.Invalid("", "empty")
	}
	if !json.Valid(data) {
		return f.syntaxError(data)
	}
	return f.Decode("", data, reflect.ValueOf(v).Elem())
}

// sizeName writes a size limit: "1 MiB" for 1<<20.
func sizeName(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.Itoa(n>>20) + " MiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// syntaxError names the line and column of data's first JSON syntax error.
func (f *Format) syntaxError(data []byte) error {
	err := json.Unmarshal(data, new(any))
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return f.Invalid("", "invalid JSON")
	}
	before := data[:max(0, min(int(se.Offset), len(data))-1)] // up to the offending byte
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return f.Invalid("", fmt.Sprintf("line %d, column %d: invalid JSON: %s", line, col, se.Error()))
}

// Decode decodes raw, a valid JSON value, into v. Its errors name path.
func (f *Format) Decode(path string, raw []byte, v reflect.Value) error {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return f.Invalid(path, "must not be null")
	}
	if c, ok := f.Types[v.Type()]; ok {
		return c.Decode(path, raw, v)
	}
	if v.Type() == durationType {
		return f.decodeDuration(path, raw, v)
	}
	switch v.Kind() {
	case reflect.Struct:
		_, err := f.DecodeStruct(path, raw, v)
		return err
	case reflect.Pointer:
		nv := reflect.New(v.Type().Elem())
		if err := f.Decode(path, raw, nv.Elem()); err != nil {
			return err
		}
		v.Set(nv)
		return nil
	case reflect.Slice:
		return f.decodeSlice(path, raw, v)
	case reflect.Map:
		return f.decodeMap(path, raw, v)
	}
	return f.decodeScalar(path, raw, v)
}

// decodeDuration decodes a Go duration string such as "8s".
func (f *Format) decodeDuration(path string, raw []byte, v reflect.Value) error {
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return f.Invalid(path, `must be a duration string such as "8s"`)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return f.Invalid(path, `must be a duration such as "8s" or "250ms"`)
	}
	v.SetInt(int64(d))
	return nil
}

// decodeScalar decodes a string, a bool or a number.
func (f *Format) decodeScalar(path string, raw []byte, v reflect.Value) error {
	switch v.Kind() {
	case reflect.String:
		var s string
		if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return f.Invalid(path, "must be a string")
		}
		v.SetString(s)
		return nil
	case reflect.Bool:
		switch string(raw) {
		case "true", "false":
			v.SetBool(string(raw) == "true")
			return nil
		}
		return f.Invalid(path, "must be true or false")
	case reflect.Int, reflect.Int64, reflect.Int32:
		return f.decodeInt(path, raw, v)
	case reflect.Float64:
		x, err := strconv.ParseFloat(string(raw), 64)
		if !isNumber(raw) || err != nil {
			return f.Invalid(path, "must be a number")
		}
		v.SetFloat(x)
		return nil
	}
	return f.Invalid(path, "cannot be set in a file")
}

func isNumber(raw []byte) bool { return raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') }

func (f *Format) decodeInt(path string, raw []byte, v reflect.Value) error {
	if !isNumber(raw) {
		return f.Invalid(path, "must be an integer")
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil { // 1e3, 40.0 or out of range
		x, ferr := strconv.ParseFloat(string(raw), 64)
		if ferr != nil || x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return f.Invalid(path, "must be an integer")
		}
		n = int64(x)
	}
	if v.OverflowInt(n) {
		return f.Invalid(path, "is out of range")
	}
	v.SetInt(n)
	return nil
}

func (f *Format) decodeSlice(path string, raw []byte, v reflect.Value) error {
	if raw[0] != '[' {
		return f.Invalid(path, "must be an array")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return f.Invalid(path, "must be an array")
	}
	s := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, item := range items {
		if err := f.Decode(path+"["+strconv.Itoa(i)+"]", item, s.Index(i)); err != nil {
			return err
		}
	}
	v.Set(s)
	return nil
}

func (f *Format) decodeMap(path string, raw []byte, v reflect.Value) error {
	m := reflect.MakeMap(v.Type())
	kt, vt := v.Type().Key(), v.Type().Elem()
	err := f.EachField(path, raw, func(key string, val []byte) error {
		at := Join(path, key)
		k := reflect.New(kt).Elem()
		if kc, ok := f.Keys[kt]; ok {
			if err := kc.Parse(at, key, k); err != nil {
				return err
			}
		} else if kt.Kind() == reflect.String {
			k.SetString(key)
		} else {
			return f.Invalid(at, "cannot be set in a file")
		}
		e := reflect.New(vt).Elem()
		if err := f.Decode(at, val, e); err != nil {
			return err
		}
		m.SetMapIndex(k, e)
		return nil
	})
	if err != nil {
		return err
	}
	v.Set(m)
	return nil
}

// DecodeStruct decodes a JSON object into the struct v and reports which fields it had:
// bit i of given is field i.
func (f *Format) DecodeStruct(path string, raw []byte, v reflect.Value) (given uint64, err error) {
	idx, keys := Fields(v.Type())
	err = f.EachField(path, raw, func(key string, val []byte) error {
		at := Join(path, key)
		if key == "_comment" {
			var s string
			var ss []string
			if json.Unmarshal(val, &s) != nil && json.Unmarshal(val, &ss) != nil {
				return f.Invalid(at, "must be a string or an array of strings")
			}
			return nil
		}
		i, ok := idx[key]
		if !ok {
			return f.Invalid(at, "unknown field (known: "+strings.Join(keys, ", ")+")")
		}
		given |= 1 << i
		return f.Decode(at, val, v.Field(i))
	})
	return given, err
}

// EachField calls fn for each member of the JSON object raw, in order, and rejects a key
// given twice.
func (f *Format) EachField(path string, raw []byte, fn func(key string, val []byte) error) error {
	if raw[0] != '{' {
		return f.Invalid(path, "must be an object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return f.Invalid(path, "must be an object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return f.Invalid(path, "must be an object")
		}
		key, _ := tok.(string)
		if seen[key] {
			return f.Invalid(Join(path, key), "given twice")
		}
		seen[key] = true
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return f.Invalid(Join(path, key), "invalid JSON")
		}
		if err := fn(key, val); err != nil {
			return err
		}
	}
	return nil
}
