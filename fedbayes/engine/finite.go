package engine

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
)

// checkFiniteFloats refuses a spec built in Go with a NaN or infinite number in any field, naming the
// field by its JSON path. A spec read from JSON cannot hold one (strictjson refuses NaN, Infinity and
// 1e999), but one set from Go would otherwise reach WithDefaults, whose deep copy goes through JSON
// and cannot write it.
func checkFiniteFloats(s *Spec) error {
	return finiteIn(reflect.ValueOf(s).Elem(), "")
}

func finiteIn(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return specErr(path, "%v; must be a finite number", f)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return finiteIn(v.Elem(), path)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if err := finiteIn(v.Field(i), joinPath(path, name)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := finiteIn(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i].Interface()) < fmt.Sprint(keys[j].Interface()) })
		for _, k := range keys {
			if err := finiteIn(v.MapIndex(k), joinPath(path, fmt.Sprint(k.Interface()))); err != nil {
				return err
			}
		}
	}
	return nil
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
