package strategy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/internal/strictjson"
	"fedbayes.dev/fedbayes/predictive"
)

// OptionsField is the spec field that holds a strategy's own options (Settings.Options); the
// errors of DecodeOptions name the fields under it.
const OptionsField = "aggregation.options"

// ClientChecker is implemented by a strategy that needs more of the clients than their trained
// models: the engine calls CheckClients with the number of training examples of every client of
// the partition (in client order), before any run is written, and reports a refusal (a
// *FieldError names the field to change) for the setting and seed whose data gave these sizes.
// FedKT checks that every client can give each of its teachers an example.
type ClientChecker interface {
	CheckClients(sizes []int) error
}

// ServerNetworker is implemented by a strategy whose server step holds, at once, networks of the
// clients' architecture beyond the clients' own: ServerNetworks returns how many (FedBE: its M
// samples, the K clients and their mean; FedKT: its K s t teachers). The engine counts them in its
// memory estimate, so that a count option that would exhaust memory is refused at spec check.
type ServerNetworker interface {
	ServerNetworks() int
}

// HasOptions reports whether s carries options (Settings.Options is neither empty nor null).
func HasOptions(s Settings) bool {
	t := bytes.TrimSpace(s.Options)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// DecodeOptions decodes the strategy's options (Settings.Options, the spec's aggregation.options)
// into dst, a pointer to the strategy's options struct, strictly: a field dst does not have, a
// value of the wrong type or a duplicate key is a *FieldError naming the field by its path under
// aggregation.options (e.g. "aggregation.options.distill.epochs"). No options leave dst as it is
// (its defaults). A strategy's factory calls it once and then validates what it read; a strategy
// without options decodes into a pointer to an empty struct, which refuses any field.
func DecodeOptions(s Settings, dst any) error {
	if !HasOptions(s) {
		return nil
	}
	if err := strictjson.Check(s.Options); err != nil {
		return optionsError(err)
	}
	var generic any
	if err := json.Unmarshal(s.Options, &generic); err != nil {
		return &FieldError{Field: OptionsField, Problem: err.Error()}
	}
	if _, ok := generic.(map[string]any); !ok {
		return &FieldError{Field: OptionsField, Problem: "must be a JSON object of the strategy's options"}
	}
	if err := unknownOption(generic, reflect.TypeOf(dst), OptionsField); err != nil {
		return err
	}
	if err := strictjson.Decode(s.Options, dst); err != nil {
		return optionsError(err)
	}
	return nil
}

// optionsError is a strictjson error of the options as a *FieldError under OptionsField.
func optionsError(err error) error {
	var je *strictjson.Error
	if errors.As(err, &je) {
		field := OptionsField
		if je.Path != "" {
			field += "." + je.Path
		}
		return &FieldError{Field: field, Problem: je.Problem}
	}
	return &FieldError{Field: OptionsField, Problem: err.Error()}
}

// unknownOption returns a *FieldError naming the first key of v (sorted, depth first) that is not
// a JSON field of the struct type t at its place, with the fields there.
func unknownOption(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	obj, ok := v.(map[string]any)
	if t.Kind() != reflect.Struct || !ok {
		return nil // a type error is the decoder's
	}
	fields := map[string]reflect.Type{}
	var names []string
	jsonFields(t, fields, &names)
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		ft, ok := fields[k]
		if !ok {
			here := "none"
			if len(names) > 0 {
				here = strings.Join(names, ", ")
			}
			return &FieldError{Field: path + "." + k, Problem: "unknown option; options here: " + here}
		}
		if err := unknownOption(obj[k], ft, path+"."+k); err != nil {
			return err
		}
	}
	return nil
}

// jsonFields adds the JSON fields of the struct type t to fields and names, in order, with the
// fields of embedded structs without a JSON name in their place (as encoding/json reads them).
func jsonFields(t reflect.Type, fields map[string]reflect.Type, names *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			jsonFields(f.Type, fields, names)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
		*names = append(*names, name)
	}
}

// Upper bounds on the count options of the strategies, checked when a strategy is built (at spec
// check), each naming its field and its bound. They are far above the papers' settings and far below
// what exhausts memory or runs for days before the first round ends.
const (
	// MaxFedBESamples bounds FedBE's samples M, 100 times Chen & Chao's 10: each sample is one more
	// teacher network held on the server and run over the whole server set (ServerNetworker).
	MaxFedBESamples = 1_000
	// MaxOptionEpochs bounds the epochs of a distillation and of FedKT's teachers, 500 times the
	// 20 of Chen & Chao and Hasan (2023), Tables B.2-B.4: every epoch is a pass over the server set
	// (or the client's data) inside one server step.
	MaxOptionEpochs = 10_000
	// MaxOptionBatch bounds a distillation's and FedKT's teachers' batch size, as the spec's
	// training.batch_size (2^20).
	MaxOptionBatch = 1 << 20
)

// checkCount refuses a count option v outside [0, max] at path (0 takes the default).
func checkCount(path string, v, max int) error {
	if v < 0 || v > max {
		return &FieldError{Field: path, Problem: fmt.Sprintf("%d; must be in [0, %d] (0 takes the default)", v, max)}
	}
	return nil
}

// checkDistill checks a distillation's options at path (e.g. "aggregation.options.distill"): a known
// optimizer, epochs in [0, MaxOptionEpochs], batch_size in [0, MaxOptionBatch], swa_cycles >= 0
// (0 takes the default), no negative step size, and a momentum in [0, 1) that only SGD takes. SWA
// cycles against epochs are checked after the strategy's defaults (checkDistilled).
func checkDistill(path string, d predictive.DistillConfig) error {
	if d.Optimizer != "" && d.Optimizer != "sgd" && d.Optimizer != "adam" {
		return notOneOf(path+".optimizer", d.Optimizer, []string{"sgd", "adam"})
	}
	if err := firstError(checkCount(path+".epochs", d.Epochs, MaxOptionEpochs), checkCount(path+".batch_size", d.BatchSize, MaxOptionBatch),
		checkCount(path+".swa_cycles", d.SWACycles, MaxOptionEpochs)); err != nil {
		return err
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"learning_rate", d.LearningRate}, {"swa_min_lr", d.SWAMinLR}} {
		if r.v < 0 {
			return &FieldError{Field: path + "." + r.name, Problem: fmt.Sprintf("%v; must be >= 0 (0 takes the default)", r.v)}
		}
	}
	if d.Momentum < 0 || d.Momentum >= 1 {
		return &FieldError{Field: path + ".momentum", Problem: fmt.Sprintf("%v; must be in [0, 1) (0: none)", d.Momentum)}
	}
	if d.Momentum != 0 && d.Optimizer == "adam" {
		return &FieldError{Field: path + ".momentum", Problem: fmt.Sprintf("%v with optimizer adam; momentum is SGD's", d.Momentum)}
	}
	if d.Seed != 0 {
		return &FieldError{Field: path + ".seed", Problem: "the distillation's seed is derived from the run's seed and the round; remove it"}
	}
	return nil
}

// noOptions decodes s's options into an empty struct: a strategy that takes none refuses any.
func noOptions(s Settings) error {
	return DecodeOptions(s, &struct{}{})
}
