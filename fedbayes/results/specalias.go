package results

import (
	"bytes"
	"encoding/json"
	"maps"
	"strings"
)

// SpecAlias is one field of an engine spec's former layout and where it is now, as JSON paths.
type SpecAlias struct {
	// Old is the field's former path, New its path now.
	Old, New string
}

// SpecAliases is the alias table of the engine spec's former layouts, by which the spec of an old
// run (run.json), an old spec file and an old sweep or variant path are read (UpgradeSpec,
// UpgradeSpecPath). Until the strategies owned their options, they sat in aggregation.server; now
// each strategy decodes its own from aggregation.options (package strategy's DecodeOptions):
//
//	aggregation.server                 -> aggregation.options
//	aggregation.server.samples         -> aggregation.options.samples        (FedBE's M)
//	aggregation.server.alpha           -> aggregation.options.alpha          (fedbe-dirichlet)
//	aggregation.server.distill         -> aggregation.options.distill        (FedBE, OneshotFL, D-BCM, D-beta, FedKT)
//	aggregation.server.fedpa_rho       -> aggregation.options.rho            (FedPA)
//	aggregation.server.server_lr       -> aggregation.options.server_lr      (FedPA)
//	aggregation.server.beta_min        -> aggregation.options.beta_min       (beta-PredBayes)
//	aggregation.server.beta_max        -> aggregation.options.beta_max       (beta-PredBayes)
//	aggregation.server.student_start   -> aggregation.options.student_start  (D-BCM, D-beta)
//	aggregation.server.fedkt.FIELD     -> aggregation.options.FIELD          (FedKT: students, teachers, plain_vote, local, distill)
//
// FedKT's former distill (aggregation.server.fedkt.distill) took the place of
// aggregation.server.distill when set, so it does so in the upgraded options.
var SpecAliases = []SpecAlias{
	{"aggregation.server", "aggregation.options"},
	{"aggregation.server.samples", "aggregation.options.samples"},
	{"aggregation.server.alpha", "aggregation.options.alpha"},
	{"aggregation.server.distill", "aggregation.options.distill"},
	{"aggregation.server.fedpa_rho", "aggregation.options.rho"},
	{"aggregation.server.server_lr", "aggregation.options.server_lr"},
	{"aggregation.server.beta_min", "aggregation.options.beta_min"},
	{"aggregation.server.beta_max", "aggregation.options.beta_max"},
	{"aggregation.server.student_start", "aggregation.options.student_start"},
	{"aggregation.server.fedkt", "aggregation.options"},
}

// UpgradeSpecPath returns the path a sweep or variant path of the former layout names now
// (SpecAliases; a path below an aliased field keeps its tail), or path itself.
func UpgradeSpecPath(path string) string {
	best := SpecAlias{}
	for _, a := range SpecAliases {
		if (path == a.Old || strings.HasPrefix(path, a.Old+".")) && len(a.Old) > len(best.Old) {
			best = a
		}
	}
	if best.Old == "" {
		return path
	}
	return best.New + strings.TrimPrefix(path, best.Old)
}

// UpgradeSpec rewrites a decoded engine spec (a JSON object as encoding/json decodes it) from the
// former layout to the current one (SpecAliases), in place: aggregation.server becomes
// aggregation.options, and the sweep's and the variants' paths and values follow. It reports
// whether anything changed. A value that is not the shape the engine writes is left as it is.
func UpgradeSpec(spec map[string]any) bool {
	changed := false
	if agg, ok := spec["aggregation"].(map[string]any); ok {
		if sv, ok := agg["server"]; ok {
			if _, taken := agg["options"]; !taken {
				agg["options"] = serverOptions(sv)
				delete(agg, "server")
				changed = true
			}
		}
	}
	if sweep, ok := spec["sweep"].(map[string]any); ok {
		changed = upgradePaths(sweep, true, nil) || changed
	}
	if variants, ok := spec["variants"].([]any); ok {
		for _, v := range variants {
			if vm, ok := v.(map[string]any); ok {
				if set, ok := vm["set"].(map[string]any); ok {
					changed = upgradePaths(set, false, baseOptions(spec)) || changed
				}
			}
		}
	}
	return changed
}

// baseOptions returns the (upgraded) aggregation.options object of spec, or nil.
func baseOptions(spec map[string]any) map[string]any {
	agg, _ := spec["aggregation"].(map[string]any)
	opts, _ := agg["options"].(map[string]any)
	return opts
}

// upgradePaths renames the former paths among the keys of m (a sweep, whose values are lists, or a
// variant's set, over the spec's options base), converting the values of a whole aggregation.server
// object.
func upgradePaths(m map[string]any, lists bool, base map[string]any) bool {
	changed := false
	for p, v := range m {
		np := UpgradeSpecPath(p)
		if np == p {
			continue
		}
		if _, taken := m[np]; taken {
			continue // both forms given: the decoder reports the old one as unknown
		}
		if p == "aggregation.server.fedkt" {
			if lists || !upgradeFedKTSet(m, v, base) {
				continue // a sweep of whole FedKT objects has no path form: the sweep check refuses the old path
			}
			delete(m, p)
			changed = true
			continue
		}
		if p == "aggregation.server" {
			if list, ok := v.([]any); ok && lists {
				for i := range list {
					list[i] = serverOptions(list[i])
				}
			} else if !lists {
				v = serverOptions(v)
			}
		}
		delete(m, p)
		m[np] = v
		changed = true
	}
	return changed
}

// upgradeFedKTSet rewrites a variant's whole aggregation.server.fedkt object v into one path per
// field in set, as the former layout read it: the object replaced every FedKT field, so a field it
// leaves out that the spec's options (base) set goes back to its zero (the default). distill left
// out is not set: its zero let the server's distill stand. It reports false, changing nothing, when
// v is not an object or a path is already set.
func upgradeFedKTSet(set map[string]any, v any, base map[string]any) bool {
	kt, ok := v.(map[string]any)
	if !ok {
		return false
	}
	zero := map[string]any{"students": 0, "teachers": 0, "plain_vote": false, "local": map[string]any{}}
	out := map[string]any{}
	for k, x := range kt {
		if d, isObj := x.(map[string]any); k == "distill" && isObj && len(d) == 0 {
			continue
		}
		out["aggregation.options."+k] = x // an unknown field: the strategy refuses it by name
	}
	for k, z := range zero {
		if _, given := kt[k]; !given {
			if _, inBase := base[k]; inBase {
				out["aggregation.options."+k] = z
			}
		}
	}
	for np := range out {
		if _, taken := set[np]; taken {
			return false
		}
	}
	maps.Copy(set, out)
	return true
}

// serverOptions converts an aggregation.server object to aggregation.options.
func serverOptions(v any) any {
	sv, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(sv))
	for k, x := range sv {
		switch k {
		case "fedkt":
		case "fedpa_rho":
			out["rho"] = x
		default:
			out[k] = x
		}
	}
	if kt, ok := sv["fedkt"].(map[string]any); ok {
		for k, x := range kt {
			if d, isObj := x.(map[string]any); k == "distill" && isObj && len(d) == 0 {
				continue // zero: the server's distill stood in
			}
			out[k] = x
		}
	}
	return out
}

// UpgradeSpecJSON is UpgradeSpec on a JSON document: it returns the document in the current layout
// and true, or raw itself and false when raw is not in a former layout (or not a JSON object).
// Numbers are kept exact.
func UpgradeSpecJSON(raw []byte) ([]byte, bool) {
	if !bytes.Contains(raw, []byte(`"server"`)) && !bytes.Contains(raw, []byte(`aggregation.server`)) {
		return raw, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return raw, false
	}
	if !UpgradeSpec(m) {
		return raw, false
	}
	out, err := json.Marshal(m)
	if err != nil {
		return raw, false
	}
	return out, true
}
