package results

import (
	"encoding/json"
	"fedbayes.dev/fedbayes/internal/strictjson"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDiffs is how many differing fields a difference message lists before "and N more".
const maxDiffs = 5

// maxShown is the longest value a difference message shows, in bytes (a setting name of megabytes
// is not echoed whole).
const maxShown = 80

// decodeSpec decodes a spec keeping numbers exact (json.Number), so that seeds above 2^53 and
// 0.1 versus 0.10000000000000001 compare as written.
func decodeSpec(raw []byte) (any, error) { return strictjson.Exact(raw) }

// specDiffs lists the fields where two decoded specs differ, by JSON path ("training.rounds",
// "seeds[2]"), as "PATH: A vs B"; a is the recorded value, b the given one.
func specDiffs(a, b any) []string {
	var out []string
	var walk func(path string, a, b any)
	walk = func(path string, a, b any) {
		switch x := a.(type) {
		case map[string]any:
			if y, ok := b.(map[string]any); ok {
				keys := map[string]bool{}
				for k := range x {
					keys[k] = true
				}
				for k := range y {
					keys[k] = true
				}
				sorted := make([]string, 0, len(keys))
				for k := range keys {
					sorted = append(sorted, k)
				}
				sort.Strings(sorted)
				for _, k := range sorted {
					va, inA := x[k]
					vb, inB := y[k]
					p := k
					if path != "" {
						p = path + "." + k
					}
					switch {
					case !inA:
						out = append(out, fmt.Sprintf("%s: absent in the recorded run, %s now", p, shown(vb)))
					case !inB:
						out = append(out, fmt.Sprintf("%s: %s in the recorded run, absent now", p, shown(va)))
					default:
						walk(p, va, vb)
					}
				}
				return
			}
		case []any:
			if y, ok := b.([]any); ok && len(x) == len(y) {
				for i := range x {
					walk(path+"["+strconv.Itoa(i)+"]", x[i], y[i])
				}
				return
			}
		default:
			if equalScalar(a, b) {
				return
			}
		}
		if path == "" {
			path = "(the whole spec)"
		}
		out = append(out, fmt.Sprintf("%s: %s in the recorded run, %s now", path, shown(a), shown(b)))
	}
	walk("", a, b)
	return out
}

// equalScalar compares two decoded JSON scalars. Numbers that are both integers compare exactly
// (seeds above 2^53 included); other numbers compare as the float64 values the engine reads (1 and
// 1.0 are the same number).
func equalScalar(a, b any) bool {
	na, okA := a.(json.Number)
	nb, okB := b.(json.Number)
	if okA && okB {
		if na == nb {
			return true
		}
		ia, errA := na.Int64()
		ib, errB := nb.Int64()
		if errA == nil && errB == nil {
			return ia == ib
		}
		fa, errA := na.Float64()
		fb, errB := nb.Float64()
		return errA == nil && errB == nil && fa == fb
	}
	if okA || okB {
		return false
	}
	return a == b // strings, booleans, nil
}

// shown formats a decoded JSON value for a message, cut to maxShown bytes.
func shown(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return clip(string(b))
}

// clip cuts s to at most maxShown bytes, at a character boundary, marking the cut with "…".
func clip(s string) string {
	if len(s) <= maxShown {
		return s
	}
	n := maxShown
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// joinDiffs joins at most maxDiffs differences with "; ".
func joinDiffs(diffs []string) string {
	if len(diffs) <= maxDiffs {
		return strings.Join(diffs, "; ")
	}
	return strings.Join(diffs[:maxDiffs], "; ") + fmt.Sprintf("; and %d more", len(diffs)-maxDiffs)
}

// labelDiffs lists the labels that differ, as for specDiffs.
func labelDiffs(a, b map[string]string) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []string
	for _, k := range sorted {
		va, inA := a[k]
		vb, inB := b[k]
		switch {
		case inA && inB && va == vb:
		case !inA:
			out = append(out, fmt.Sprintf("label %s: absent in the recorded run, %q now", clip(k), clip(vb)))
		case !inB:
			out = append(out, fmt.Sprintf("label %s: %q in the recorded run, absent now", clip(k), clip(va)))
		default:
			out = append(out, fmt.Sprintf("label %s: %q in the recorded run, %q now", clip(k), clip(va), clip(vb)))
		}
	}
	return out
}
