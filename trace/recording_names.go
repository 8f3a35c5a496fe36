package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// checkNames refuses, in the JSON object b that decoded into a value of type t, what
// encoding/json lets through: a field name that matches one of t's only when case is
// ignored ("Stage", "KIND", "ſtage" for "stage"), a field given twice (encoding/json
// keeps the last), and a field that is null (encoding/json leaves the value as it
// was). It walks nested objects and arrays (the header's pipeline) the same way. b
// has decoded without error: its shape matches t.
//
// Why: a recording's names are the format's, exactly, once each, as the writer writes
// them. A file that says "Stage", or "kind" twice, was not written by this package;
// reading it anyway would replay a guess.
//
// Names are compared as JSON strings, after their escapes: "st\u0061ge" is "stage".
func checkNames(b []byte, t reflect.Type) error {
	return walkNames(json.NewDecoder(bytes.NewReader(b)), t, "")
}

// walkNames reads one value from dec, expected to decode into type t (nil when
// unknown), and checks the names in it; path is where it is, for the error.
func walkNames(dec *json.Decoder, t reflect.Type, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch tok {
	case nil:
		return fmt.Errorf("field %q is null: a recording leaves out a field it has no value for", path)
	case json.Delim('{'):
		fields := jsonFields(t)
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			name, _ := tok.(string)
			at := name
			if path != "" {
				at = path + "." + name
			}
			if seen[name] {
				return fmt.Errorf("field %q appears twice", at)
			}
			seen[name] = true
			ft, ok := fields[name]
			if !ok && fields != nil {
				for known := range fields {
					if strings.EqualFold(known, name) {
						return fmt.Errorf("field %q: names are case-sensitive, and this one is %q", at, known)
					}
				}
				return fmt.Errorf("unknown field %q", at)
			}
			if err := walkNames(dec, ft, at); err != nil {
				return err
			}
		}
		_, err = dec.Token() // the closing brace
		return err
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkNames(dec, elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err = dec.Token() // the closing bracket
		return err
	}
	return nil // a string, a number or a boolean
}

// fieldsByType caches jsonFields: checkNames runs on every line of a recording, and
// the few types it meets are the same on every line. The maps are never written after
// they are stored.
var fieldsByType sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields is the fields of struct type t by their JSON names, with their types;
// nil if t is not a struct that encoding/json decodes field by field.
//
// Simplified: it knows the tags this package's recording types use (a name, then
// options) and no embedded structs, which they do not have.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if t == nil {
		return nil
	}
	if f, ok := fieldsByType.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	f := structFields(t)
	fieldsByType.Store(t, f)
	return f
}

// structFields computes jsonFields.
func structFields(t reflect.Type) map[string]reflect.Type {
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return nil
	}
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}
