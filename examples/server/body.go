package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// readBody reads a request body strictly, before it is decoded: Content-Type
// application/json (charset utf-8 if one is given), at most limit bytes, valid UTF-8 with no
// lone surrogate escape, and in every object each member name once and spelled exactly as
// the field it sets. encoding/json alone would turn invalid UTF-8 into U+FFFD, let the last
// of two equal names win and match names case-insensitively (TEXT sets text).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, int, string) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, codeMediaType, "Content-Type must be application/json"
		}
		if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
			return nil, codeCharset, "Content-Type: charset must be utf-8"
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, codeTooLarge, fmt.Sprintf("body: larger than %d bytes", limit)
		}
		return nil, codeBadRequest, "body: could not be read"
	}
	if !utf8.Valid(body) {
		return nil, codeBadUTF8, "body: not valid UTF-8"
	}
	if loneSurrogate(body) {
		return nil, codeBadUTF8, "body: a \\u escape holds half a UTF-16 surrogate pair"
	}
	if code, msg := checkNames(body); code != codeOK {
		return nil, code, msg
	}
	return body, codeOK, ""
}

// fieldNames are the member names the request bodies know, by their exact spelling.
var fieldNames = jsonNames(reflect.TypeOf(translateRequest{}), reflect.TypeOf(batchRequest{}))

// jsonNames returns the JSON names of the fields of the struct types.
func jsonNames(types ...reflect.Type) map[string]bool {
	names := map[string]bool{}
	for _, t := range types {
		for f := range t.Fields() {
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				names[name] = true
			}
		}
	}
	return names
}

// frame is one open object or array in checkNames' walk.
type frame struct {
	names    map[string]bool // names seen so far; nil for an array
	wantName bool            // in an object, the next token is a member name
}

// maxDepth is as deep as checkNames walks: a request body is two levels deep, and a body of
// a million '[' cost a frame each (100 MB) before the decoder refused it.
const maxDepth = 32

// checkNames walks the JSON in body and reports the first object member whose name appears
// twice in its object, or that is not a field name but equals one ignoring case. Syntax
// errors, and bodies nested deeper than maxDepth, are left to the decoder, which words
// them (no request nests that deep).
func checkNames(body []byte) (int, string) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return codeOK, ""
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.wantName {
			name, _ := tok.(string) // '}' ends the object instead: handled below
			if _, isDelim := tok.(json.Delim); !isDelim {
				if code, msg := checkName(top.names, name); code != codeOK {
					return code, msg
				}
				top.wantName = false
				continue
			}
		}
		if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') && len(stack) == maxDepth {
			return codeOK, ""
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{names: map[string]bool{}, wantName: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].names != nil {
				stack[len(stack)-1].wantName = true
			}
		default: // a scalar value
			if top != nil && top.names != nil {
				top.wantName = true
			}
		}
	}
}

// checkName records name in seen and reports a duplicate or a case variant of a field name.
func checkName(seen map[string]bool, name string) (int, string) {
	if seen[name] {
		return codeDuplicate, fmt.Sprintf("body: member %q appears twice in one object", name)
	}
	seen[name] = true
	if fieldNames[name] {
		return codeOK, ""
	}
	for f := range fieldNames {
		if strings.EqualFold(f, name) {
			return codeNameCase, fmt.Sprintf("body: member %q: names are case-sensitive; did you mean %q?", name, f)
		}
	}
	return codeOK, "" // unknown: the decoder rejects it
}

// loneSurrogate reports whether a JSON string in body holds a \u escape of half a UTF-16
// surrogate pair (a high one not followed by a low one, or a low one alone), which
// encoding/json would turn into U+FFFD. Backslashes occur only in strings in valid JSON.
func loneSurrogate(body []byte) bool {
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			continue
		}
		r, ok := escapedRune(body, i)
		switch {
		case !ok:
			i++ // an escape of one character, such as \\ or \"
		case utf16.IsSurrogate(r) && r >= 0xDC00: // a low half first
			return true
		case utf16.IsSurrogate(r):
			lo, ok := escapedRune(body, i+6)
			if !ok || utf16.DecodeRune(r, lo) == utf8.RuneError {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

// escapedRune decodes the \uXXXX escape at body[i:], if there is one.
func escapedRune(body []byte, i int) (rune, bool) {
	if i+6 > len(body) || body[i] != '\\' || body[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 32)
	return rune(n), err == nil
}

// goNames matches the names of translate.Request's fields that the Client's validation
// messages use ("Target is required"); jsonMessage puts the body's member names instead.
var goNames = regexp.MustCompile(`\b(Text|Source|Target|Engine|Scene|Style|Priority|UserID|RequestID|AllowFallback)\b`)

// memberOf is the body's member name for each of goNames.
var memberOf = map[string]string{"Text": "text", "Source": "source_lang", "Target": "target_lang",
	"Engine": "engine", "Scene": "scene", "Style": "style", "Priority": "priority",
	"UserID": "user_id", "RequestID": "request_id", "AllowFallback": "allow_fallback"}

// jsonMessage words a request-validation message of the Client with the body's member names
// ("target_lang is required"), leaving quoted parts (an engine's name) alone.
func jsonMessage(msg string) string {
	parts := strings.Split(msg, `"`)
	for i := 0; i < len(parts); i += 2 {
		parts[i] = goNames.ReplaceAllStringFunc(parts[i], func(n string) string { return memberOf[n] })
	}
	return strings.Join(parts, `"`)
}
