//go:build unix

package terminal

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FormAction is what became of a form (an MCP elicitation): its spelling
// is the protocol's result action.
type FormAction string

const (
	// FormAccept: the person sent answers (FormAnswer.Content).
	FormAccept FormAction = "accept"
	// FormDecline: the person said no, or the form could not be filled.
	FormDecline FormAction = "decline"
	// FormCancel: the person walked away (Ctrl-D), or the context ended.
	FormCancel FormAction = "cancel"
)

// FormAnswer is the outcome of a form.
type FormAnswer struct {
	Action FormAction
	// Content holds the answers by field name when Action is FormAccept:
	// a string, int64, float64, bool, or []string (a multi-select) as the
	// field's type says, or the schema's own default value. A field left
	// empty is absent.
	Content map[string]any
}

// field is one property of a form: the flat object of primitives the
// protocol allows.
type field struct {
	Name        string
	Title       string
	Description string
	Type        string // string, integer, number, boolean, or array (multi-select)
	Choices     []string
	Default     any
	Required    bool
	// Min and Max bound a number's value, a string's length in characters
	// and a multi-select's count of choices; nil is no bound.
	Min, Max *float64
}

// form is a requested schema's fields, in the order the schema lists
// them.
type form []field

// readForm reads a requested schema; what is not a flat object of
// primitives is an error (the form is declined).
func readForm(schema json.RawMessage) (form, error) {
	var s struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil || s.Type != "object" {
		return nil, errors.New("the requested schema is not an object")
	}
	names, err := keysInOrder(s.Properties)
	if err != nil {
		return nil, err
	}
	var props map[string]struct {
		Type        string   `json:"type"`
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Enum        []string `json:"enum"`
		OneOf       []struct {
			Const string `json:"const"`
		} `json:"oneOf"`
		Items *struct {
			Enum  []string `json:"enum"`
			AnyOf []struct {
				Const string `json:"const"`
			} `json:"anyOf"`
		} `json:"items"`
		Default   any      `json:"default"`
		Minimum   *float64 `json:"minimum"`
		Maximum   *float64 `json:"maximum"`
		MinLength *float64 `json:"minLength"`
		MaxLength *float64 `json:"maxLength"`
		MinItems  *float64 `json:"minItems"`
		MaxItems  *float64 `json:"maxItems"`
	}
	if len(s.Properties) > 0 {
		if err := json.Unmarshal(s.Properties, &props); err != nil {
			return nil, err
		}
	}
	var f form
	for _, name := range names {
		p := props[name]
		fd := field{Name: name, Title: p.Title, Description: p.Description, Type: p.Type, Default: p.Default,
			Required: slices.Contains(s.Required, name), Choices: p.Enum}
		for _, o := range p.OneOf {
			fd.Choices = append(fd.Choices, o.Const)
		}
		if p.Items != nil {
			fd.Choices = append(fd.Choices, p.Items.Enum...)
			for _, o := range p.Items.AnyOf {
				fd.Choices = append(fd.Choices, o.Const)
			}
		}
		switch fd.Type {
		case "string":
			fd.Min, fd.Max = p.MinLength, p.MaxLength
		case "integer", "number":
			fd.Min, fd.Max = p.Minimum, p.Maximum
		case "boolean":
		case "array":
			if len(fd.Choices) == 0 {
				return nil, fmt.Errorf("field %s: an array without choices", name)
			}
			fd.Min, fd.Max = p.MinItems, p.MaxItems
		default:
			return nil, fmt.Errorf("field %s: type %q is no form field", name, fd.Type)
		}
		f = append(f, fd)
	}
	return f, nil
}

// keysInOrder lists an object's keys as written, each once.
func keysInOrder(obj json.RawMessage) ([]string, error) {
	if len(obj) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(obj)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("properties is not an object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if k := t.(string); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// FormDefaults fills the form a server requested (an MCP elicitation's
// requested schema) with the schema's defaults, for a host with nobody to
// ask: FormAccept with every default, or FormDecline when a required
// field has none. The error says why schema is no form (then the answer
// is FormDecline): a form is an object whose properties are strings,
// numbers, integers, booleans, or multi-selects of listed choices.
func FormDefaults(schema json.RawMessage) (FormAnswer, error) {
	f, err := readForm(schema)
	if err != nil {
		return FormAnswer{Action: FormDecline}, err
	}
	content := map[string]any{}
	for _, fd := range f {
		if fd.Default != nil {
			content[fd.Name] = fd.Default
		} else if fd.Required {
			return FormAnswer{Action: FormDecline}, nil
		}
	}
	return FormAnswer{Action: FormAccept, Content: content}, nil
}

// parseBool reads a yes or a no.
func parseBool(s string) (v, ok bool) {
	switch strings.ToLower(s) {
	case "y", "yes", "true":
		return true, true
	case "n", "no", "false":
		return false, true
	}
	return false, false
}

// parse reads s, a non-empty answer, as the field's value.
func (fd field) parse(s string) (any, error) {
	switch {
	case fd.Type == "array":
		var out []string
		for _, part := range strings.Split(s, ",") {
			part = strings.TrimSpace(part)
			if !slices.Contains(fd.Choices, part) {
				return nil, fmt.Errorf("%q is not one of the choices", part)
			}
			out = append(out, part)
		}
		if err := fd.bounded(float64(len(out)), "choices"); err != nil {
			return nil, err
		}
		return out, nil
	case len(fd.Choices) > 0:
		if !slices.Contains(fd.Choices, s) {
			return nil, fmt.Errorf("want one of: %s", strings.Join(fd.Choices, ", "))
		}
		return s, nil
	case fd.Type == "boolean":
		if v, ok := parseBool(s); ok {
			return v, nil
		}
		return nil, errors.New("want yes or no")
	case fd.Type == "integer":
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, errors.New("want a whole number")
		}
		if err := fd.bounded(float64(v), ""); err != nil {
			return nil, err
		}
		return v, nil
	case fd.Type == "number":
		v, err := strconv.ParseFloat(s, 64)
		// NaN and infinities have no JSON spelling.
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("want a number")
		}
		if err := fd.bounded(v, ""); err != nil {
			return nil, err
		}
		return v, nil
	}
	if err := fd.bounded(float64(utf8.RuneCountInString(s)), "characters"); err != nil {
		return nil, err
	}
	return s, nil
}

// bounded checks n against the field's bounds; unit names what n counts
// ("" for a number's value).
func (fd field) bounded(n float64, unit string) error {
	if unit != "" {
		unit = " " + unit
	}
	if fd.Min != nil && n < *fd.Min {
		return fmt.Errorf("want at least %s%s", num(*fd.Min), unit)
	}
	if fd.Max != nil && n > *fd.Max {
		return fmt.Errorf("want at most %s%s", num(*fd.Max), unit)
	}
	return nil
}

// num writes a bound as the schema would.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
