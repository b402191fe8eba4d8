package rerank

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// DecodeOptions decodes the spec's options into dst, a pointer to a
// struct whose fields' yaml tags name the options (a field tagged
// ",inline" holds more of them). Each stage type has one such struct,
// which its factory, its trainer and the CLI's training flags share, so
// that an option is named once. dst holds the defaults on entry: the
// fields of options not given keep their values.
//
// Decoding is strict: an option no field names is an error naming it and
// the accepted names, and a value of another kind than its field's (a
// string for a number, a fraction for an integer, a number for a string)
// one naming the option and the kind wanted. Values are decoded by
// yaml.v3 (with KnownFields), so a field type of one's own may implement
// yaml.Unmarshaler.
func (s StageSpec) DecodeOptions(dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("rerank: DecodeOptions wants a pointer to a struct, got %T", dst)
	}
	fields := map[string]reflect.Type{}
	optionFields(rv.Elem().Type(), fields)
	names := slices.Sorted(maps.Keys(fields))
	if s.read != nil {
		for _, n := range names {
			s.read[n] = true
		}
	}
	var unknown []string
	for _, name := range slices.Sorted(maps.Keys(s.Options)) {
		t, ok := fields[name]
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		if err := decodeOption(name, s.Options[name], t, dst); err != nil {
			return err
		}
	}
	if len(unknown) > 0 {
		return unknownOptionsError(unknown, names)
	}
	return nil
}

// unknownOptionsError names the unknown options and the accepted ones.
func unknownOptionsError(unknown, accepted []string) error {
	word := "option"
	if len(unknown) > 1 {
		word = "options"
	}
	list := "none"
	if len(accepted) > 0 {
		list = strings.Join(accepted, ", ")
	}
	return fmt.Errorf("unknown %s %s (accepted: %s)", word, strings.Join(unknown, ", "), list)
}

// optionFields adds the options of struct type t to fields: each
// exported field's yaml name, the fields of an inlined struct.
func optionFields(t reflect.Type, fields map[string]reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, flags, _ := strings.Cut(tag, ",")
		switch {
		case !f.IsExported() || name == "-":
		case strings.Contains(","+flags+",", ",inline,") && f.Type.Kind() == reflect.Struct:
			optionFields(f.Type, fields)
		case name == "":
			fields[strings.ToLower(f.Name)] = f.Type
		default:
			fields[name] = f.Type
		}
	}
}

// decodeOption decodes the value v of option name, whose field has type
// t, into dst.
func decodeOption(name string, v any, t reflect.Type, dst any) error {
	raw, err := marshalOption(name, v)
	if err != nil {
		return fmt.Errorf("option %s: %v (%T) is no YAML value", name, v, v)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("option %s: %w", name, err)
	}
	if err := checkKind(doc.Content[0].Content[1], t); err != nil {
		return fmt.Errorf("option %s: %w", name, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(dst); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			msgs := make([]string, len(te.Errors))
			for i, m := range te.Errors {
				_, m, _ = strings.Cut(m, ": ") // "line 1: …"
				msgs[i] = m
			}
			err = errors.New(strings.Join(msgs, "; "))
		}
		return fmt.Errorf("option %s: %w", name, err)
	}
	return nil
}

// marshalOption writes option name as a YAML document, its floats kept
// floats. yaml.v3 panics on values it cannot write (a func, a channel),
// which Go code may put in a spec's options: that is an error here.
func marshalOption(name string, v any) (raw []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return yaml.Marshal(map[string]any{name: keepFloats(v)})
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// checkKind refuses a YAML value n of another kind than type t holds,
// which yaml.v3 would convert (any scalar to a string, a fraction to an
// integer by truncation). Types that decode themselves are theirs to
// check.
func checkKind(n *yaml.Node, t reflect.Type) error {
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	if t.Kind() == reflect.Pointer {
		if n.Tag == "!!null" {
			return nil
		}
		return checkKind(n, t.Elem())
	}
	got := func() string {
		if n.Kind == yaml.ScalarNode {
			return fmt.Sprintf("%s (%s)", n.Value, strings.TrimPrefix(n.Tag, "!!"))
		}
		return "a " + map[yaml.Kind]string{yaml.SequenceNode: "list", yaml.MappingNode: "map"}[n.Kind]
	}
	number := n.Tag == "!!int" || n.Tag == "!!float"
	switch t.Kind() {
	case reflect.String:
		if n.Tag != "!!str" {
			return fmt.Errorf("want a string, got %s", got())
		}
	case reflect.Bool:
		if n.Tag != "!!bool" {
			return fmt.Errorf("want true or false, got %s", got())
		}
	case reflect.Float32, reflect.Float64:
		if !number {
			return fmt.Errorf("want a number, got %s", got())
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !number {
			return fmt.Errorf("want a number, got %s", got())
		}
		var f float64
		if n.Tag == "!!float" && (n.Decode(&f) != nil || f != math.Trunc(f) || math.IsInf(f, 0)) {
			return fmt.Errorf("want an integer, got %s", n.Value)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("want a list, got %s", got())
		}
		for _, e := range n.Content {
			if err := checkKind(e, t.Elem()); err != nil {
				return err
			}
		}
	}
	return nil
}

// OptionsOf returns the options struct v (as DecodeOptions reads them)
// as a spec's Options: the CLI fills a stage type's options struct from
// its flags and trains the spec that holds them.
func OptionsOf(v any) (map[string]any, error) {
	raw, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	var opts map[string]any
	if err := yaml.Unmarshal(raw, &opts); err != nil {
		return nil, err
	}
	return opts, nil
}
