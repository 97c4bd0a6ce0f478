package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/internal/strictjson"
)

// Setting is one point of a spec's sweep: a spec without a sweep (defaults applied), its name and the
// labels that tell it apart in results tables.
type Setting struct {
	// Name is the setting name: the spec's name followed by the swept values.
	Name string
	// Labels are dataset, partition, model, rule and weighting, plus one label per swept field (named
	// after the field's last path element, or its whole path where two would clash).
	Labels map[string]string
	// Spec is the setting's spec with defaults applied and no sweep.
	Spec *Spec
}

// Expand returns the settings of s: each variant (one setting if there are none) crossed with the
// cartesian product of its sweep, each validated. The first invalid field of any setting is returned
// as a *SpecError naming the setting and the field's JSON path, before any work is done.
func (s *Spec) Expand() ([]Setting, error) {
	if err := checkSeedList(s); err != nil {
		return nil, err
	}
	if err := checkOptionsJSON(s); err != nil {
		return nil, err
	}
	s, err := upgradeFormer(s)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(s.Sweep))
	for p := range s.Sweep {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := checkSweepPath(p); err != nil {
			return nil, err
		}
		if len(s.Sweep[p]) == 0 {
			return nil, specErr("sweep."+p, "empty list of values")
		}
	}
	if err := checkVariants(s.Variants, s.Sweep); err != nil {
		return nil, err
	}
	if len(s.Name) > maxNameBytes {
		return nil, specErr("name", "%d bytes; at most %d (the name is part of every results folder's name)", len(s.Name), maxNameBytes)
	}
	if err := checkSweepSize(s, paths); err != nil {
		return nil, err
	}
	labelNames := sweepLabelNames(paths)
	base := s.Clone()
	base.Sweep, base.Variants = nil, nil
	baseMap, err := toMap(base)
	if err != nil {
		return nil, err
	}
	variants := s.Variants
	if len(variants) == 0 {
		variants = []Variant{{}}
	}
	settings := make([]Setting, 0, settingCount(s, paths))
	for vi, variant := range variants {
		vm := deepCopyMap(baseMap)
		vname := s.Name
		if vname == "" {
			vname = "run"
		}
		if variant.Label != "" {
			vname += "-" + variant.Label
		}
		for _, p := range slices.Sorted(maps.Keys(variant.Set)) {
			v, err := decodeValue(variant.Set[p])
			if err != nil {
				return nil, specErr(fmt.Sprintf("variants[%d].set.%s", vi, p), "not a JSON value: %v", err)
			}
			if err := setPath(vm, strings.Split(p, "."), v); err != nil {
				return nil, specErr(fmt.Sprintf("variants[%d].set.%s", vi, p), "%v", err)
			}
		}
		idx := make([]int, len(paths))
		for {
			m := deepCopyMap(vm)
			name := vname
			swept := map[string]string{}
			for i, p := range paths {
				raw := s.Sweep[p][idx[i]]
				v, err := decodeValue(raw)
				if err != nil {
					return nil, specErr(fmt.Sprintf("sweep.%s[%d]", p, idx[i]), "not a JSON value: %v", err)
				}
				if err := setPath(m, strings.Split(p, "."), v); err != nil {
					return nil, specErr("sweep."+p, "%v", err)
				}
				text := valueText(raw)
				swept[labelNames[i]] = text
				name += "-" + text
			}
			if len(name) > maxNameBytes {
				return nil, &SpecError{Path: "sweep", Setting: shortName(name), Problem: fmt.Sprintf(
					"the setting name is %d bytes, at most %d (it names the results folders): shorten the swept values or the name", len(name), maxNameBytes)}
			}
			if err := checkExplicitZeros(m); err != nil {
				err.(*SpecError).Setting = shortName(name)
				return nil, err
			}
			one, err := fromMap(m)
			if err != nil {
				if se, ok := err.(*SpecError); ok {
					se.Setting = shortName(name)
					return nil, se
				}
				return nil, &SpecError{Path: "sweep", Problem: err.Error(), Setting: shortName(name)}
			}
			if err := one.Validate(); err != nil {
				if se, ok := err.(*SpecError); ok && (len(paths) > 0 || variant.Label != "") {
					se.Setting = shortName(name)
				}
				return nil, err
			}
			one = one.WithDefaults()
			one.Name = name
			labels := baseLabels(one)
			if variant.Label != "" {
				labels["variant"] = variant.Label
			}
			for k, v := range swept {
				labels[k] = v
			}
			settings = append(settings, Setting{Name: name, Labels: labels, Spec: one})
			i := len(paths) - 1
			for ; i >= 0; i-- {
				idx[i]++
				if idx[i] < len(s.Sweep[paths[i]]) {
					break
				}
				idx[i] = 0
			}
			if i < 0 {
				break
			}
		}
	}
	seen := map[string]bool{}
	for _, st := range settings {
		if seen[st.Name] {
			return nil, specErr("sweep", "two settings are both named %q; make the swept values distinct", st.Name)
		}
		seen[st.Name] = true
	}
	return settings, nil
}

// checkVariants checks the variants' labels and paths: labels are non-empty, distinct and made of
// letters, digits, '.', '_' and '-'; every path is a field that may be swept and none is also swept.
func checkVariants(variants []Variant, sweep map[string][]json.RawMessage) error {
	seen := map[string]bool{}
	for i, v := range variants {
		at := fmt.Sprintf("variants[%d]", i)
		if v.Label == "" || strings.Trim(v.Label, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
			return specErr(at+".label", "%q; a label is letters, digits, '.', '_' and '-'", v.Label)
		}
		if seen[v.Label] {
			return specErr(at+".label", "%q is used twice", v.Label)
		}
		seen[v.Label] = true
		if len(v.Set) == 0 {
			return specErr(at+".set", "sets no field")
		}
		for _, p := range slices.Sorted(maps.Keys(v.Set)) {
			if err := checkSweepPath(p); err != nil {
				var se *SpecError
				if errors.As(err, &se) {
					return specErr(at+".set."+p, "%s", se.Problem)
				}
				return err
			}
			if _, ok := sweep[p]; ok {
				return specErr(at+".set."+p, "is also swept; a field is set by the variants or the sweep, not both")
			}
		}
	}
	return nil
}

// baseLabels are the labels every setting carries.
func baseLabels(s *Spec) map[string]string {
	rule, err := aggregate.ParseRule(s.Aggregation.Rule)
	ruleName := s.Aggregation.Rule
	if err == nil {
		ruleName = string(rule)
	}
	part := s.Partition.Method
	switch part {
	case "dirichlet":
		part += "(" + strconv.FormatFloat(s.Partition.Alpha, 'g', -1, 64) + ")"
	case "shards":
		part += "(" + strconv.Itoa(s.Partition.ShardsPerClient) + ")"
	case "classes":
		part += "(" + strconv.Itoa(s.Partition.ClassesPerClient) + ")"
	case "heterogeneity":
		part += "(" + strconv.FormatFloat(s.Partition.H, 'g', -1, 64) + ")"
	}
	return map[string]string{
		"dataset":   s.Dataset.Name,
		"partition": part,
		"model":     string(s.Model.Kind) + "-" + string(s.Model.Arch),
		"rule":      ruleName,
		"weighting": s.Aggregation.Weighting,
	}
}

// sweepLabelNames names each swept path's label: its last element, or the path with "_" for "." where
// two last elements clash.
func sweepLabelNames(paths []string) []string {
	count := map[string]int{}
	last := make([]string, len(paths))
	for i, p := range paths {
		parts := strings.Split(p, ".")
		last[i] = parts[len(parts)-1]
		count[last[i]]++
	}
	for i, p := range paths {
		if count[last[i]] > 1 || last[i] == "setting" || last[i] == "seed" {
			last[i] = strings.ReplaceAll(p, ".", "_")
		}
	}
	return last
}

// valueText is a swept value as label text: a string without quotes, anything else as compact JSON.
func valueText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if text, ok := objectText(raw); ok {
		return text
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// objectText names a JSON object value by its member values in order, joined by "-": a swept
// partition {"method": "dirichlet", "alpha": 0.5} reads "dirichlet-0.5".
func objectText(raw json.RawMessage) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	var parts []string
	for dec.More() {
		if _, err := dec.Token(); err != nil { // the key
			return "", false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", false
		}
		parts = append(parts, valueText(v))
	}
	return strings.Join(parts, "-"), len(parts) > 0
}

// checkSweepPath checks that path names a field of Spec (other than the sweep itself, the name or the
// seeds), or a field under aggregation.options (which the strategy checks).
func checkSweepPath(path string) error {
	if path == "" {
		return specErr("sweep", "empty path")
	}
	t := reflect.TypeOf(Spec{})
	parts := strings.Split(path, ".")
	for i, part := range parts {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == rawJSONType {
			// Below aggregation.options: the strategy's own fields, which its factory checks.
			if part == "" {
				return specErr("sweep."+path, "empty field name")
			}
			continue
		}
		if t.Kind() != reflect.Struct {
			return specErr("sweep."+path, "%q is not an object with fields", strings.Join(parts[:i], "."))
		}
		f, ok := fieldByJSONName(t, part)
		if !ok {
			return specErr("sweep."+path, "unknown field %q; fields here: %s", part, strings.Join(jsonFieldNames(t), ", "))
		}
		if i == 0 && (part == "sweep" || part == "seeds" || part == "name" || part == "variants" || part == "budget") {
			return specErr("sweep."+path, "%q cannot be swept (seeds are listed in \"seeds\")", part)
		}
		t = f.Type
	}
	return nil
}

// rawJSONType is the type of a spec field whose content its reader decodes (aggregation.options).
var rawJSONType = reflect.TypeOf(json.RawMessage(nil))

// fieldByJSONName finds the struct field with JSON name name.
func fieldByJSONName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if jsonName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// jsonName is a field's JSON name ("" if not serialised).
func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if tag == "-" || !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return f.Name
	}
	return name
}

// jsonFieldNames lists the JSON names of a struct's fields.
func jsonFieldNames(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if n := jsonName(t.Field(i)); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// checkUnknownFields reports the first JSON key of raw that is not a field of Spec, with its path.
func checkUnknownFields(raw []byte) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("spec: not valid JSON: %w", err)
	}
	return walkUnknown(v, reflect.TypeOf(Spec{}), "")
}

func walkUnknown(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil // a type error, reported by the decoder
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			f, ok := fieldByJSONName(t, k)
			p := k
			if path != "" {
				p = path + "." + k
			}
			if !ok {
				return specErr(p, "unknown field; fields here: %s", strings.Join(jsonFieldNames(t), ", "))
			}
			if err := walkUnknown(obj[k], f.Type, p); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if arr, ok := v.([]any); ok && t.Elem().Kind() == reflect.Struct {
			for i, e := range arr {
				if err := walkUnknown(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// toMap converts a spec to its generic JSON form.
func toMap(s *Spec) (map[string]any, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // integers stay exact (a seed 2^53+1 is not rounded through float64)
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	return m, nil
}

// fromMap decodes a generic JSON form strictly into a spec.
func fromMap(m map[string]any) (*Spec, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if err := checkUnknownFields(raw); err != nil {
		return nil, err
	}
	return decodeSpec(raw, false)
}

// decodeValue decodes one JSON value with numbers kept as json.Number (exact integers).
func decodeValue(raw []byte) (any, error) {
	if err := strictjson.Check(raw); err != nil {
		return nil, err
	}
	return strictjson.Exact(raw)
}

// setPath sets m[p0][p1]...= v, creating objects on the way where a field is absent or null; a
// field on the way that holds another value (aggregation.options: 5 under a sweep of
// aggregation.options.samples) is an error rather than replaced.
func setPath(m map[string]any, path []string, v any) error {
	for i, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			if m[p] != nil {
				return fmt.Errorf("%s holds %s, not an object, so nothing can be set below it", strings.Join(path[:i+1], "."), valueKind(m[p]))
			}
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
	return nil
}

// valueKind names the kind of a generic JSON value for messages.
func valueKind(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// deepCopyMap copies a generic JSON object.
func deepCopyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return deepCopyMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyValue(e)
		}
		return out
	}
	return v
}
