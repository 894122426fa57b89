package jsonfile

import (
	"encoding/json"
	"math"
	"reflect"
	"sort"
	"strconv"
	"time"
)

// Append appends v as JSON in the file format.
func (f *Format) Append(b []byte, path string, v reflect.Value) ([]byte, error) {
	if c, ok := f.Types[v.Type()]; ok {
		return c.Append(b, path, v)
	}
	if v.Type() == durationType {
		return strconv.AppendQuote(b, time.Duration(v.Int()).String()), nil
	}
	switch v.Kind() {
	case reflect.Struct:
		return f.AppendStruct(b, path, v, nil)
	case reflect.Pointer:
		return f.Append(b, path, v.Elem())
	case reflect.Slice:
		return f.appendSlice(b, path, v)
	case reflect.Map:
		return f.appendMap(b, path, v)
	}
	return f.appendScalar(b, path, v)
}

// appendSlice appends v's elements as a JSON array, each at its own index path.
func (f *Format) appendSlice(b []byte, path string, v reflect.Value) ([]byte, error) {
	b = append(b, '[')
	for i := range v.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = f.Append(b, path+"["+strconv.Itoa(i)+"]", v.Index(i)); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendScalar appends a string, bool or number; NaN, infinities and any
// other kind cannot be written to a file.
func (f *Format) appendScalar(b []byte, path string, v reflect.Value) ([]byte, error) {
	switch v.Kind() {
	case reflect.String:
		s, _ := json.Marshal(v.String())
		return append(b, s...), nil
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool()), nil
	case reflect.Int, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case reflect.Float64:
		x := v.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, f.Invalid(path, "must be a finite number")
		}
		return strconv.AppendFloat(b, x, 'g', -1, 64), nil
	}
	return nil, f.Invalid(path, "cannot be written to a file")
}

// A FieldFunc may write field i of a struct itself: it returns the field's JSON (nil to
// leave the field out) and true, or false to leave the field to AppendStruct.
type FieldFunc func(i int, path string, v reflect.Value) (out []byte, done bool, err error)

// AppendStruct appends the struct v as a JSON object of its non-zero exported fields, in
// field order; field, when not nil, may write a field itself.
func (f *Format) AppendStruct(b []byte, path string, v reflect.Value, field FieldFunc) ([]byte, error) {
	idx, keys := Fields(v.Type())
	b = append(b, '{')
	first := true
	for _, key := range keys {
		i := idx[key]
		fv, at := v.Field(i), Join(path, key)
		out, done, err := []byte(nil), false, error(nil)
		if field != nil {
			out, done, err = field(i, at, fv)
		}
		switch {
		case err != nil:
			return nil, err
		case done && out == nil, !done && fv.IsZero():
			continue
		case !done:
			if out, err = f.Append(nil, at, fv); err != nil {
				return nil, err
			}
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = strconv.AppendQuote(b, key)
		b = append(b, ':')
		b = append(b, out...)
	}
	return append(b, '}'), nil
}

type entry struct {
	key string
	val reflect.Value
	ord int
}

func (f *Format) appendMap(b []byte, path string, v reflect.Value) ([]byte, error) {
	var entries []entry
	kc, coded := f.Keys[v.Type().Key()]
	for it := v.MapRange(); it.Next(); {
		k := it.Key()
		e := entry{val: it.Value()}
		switch {
		case coded:
			var err error
			if e.key, e.ord, err = kc.Name(path, k); err != nil {
				return nil, err
			}
		case k.Kind() == reflect.String:
			e.key = k.String()
		default:
			return nil, f.Invalid(path, "cannot be written to a file")
		}
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].ord != entries[j].ord {
			return entries[i].ord < entries[j].ord
		}
		return entries[i].key < entries[j].key
	})
	b = append(b, '{')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(e.key)
		b = append(b, k...)
		b = append(b, ':')
		var err error
		if b, err = f.Append(b, Join(path, e.key), e.val); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}
