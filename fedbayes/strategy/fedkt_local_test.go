package strategy

import (
	"encoding/json"
	"errors"
	"testing"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/predictive"
)

// TestFedKTLocalMomentum: FedKT's teachers take the clients' training where options.local leaves a
// field unset, the optimizer with its momentum as the engine means it (0: none, not predictive's
// default 0.9); a momentum outside [0, 1) is refused at aggregation.options.local.momentum.
func TestFedKTLocalMomentum(t *testing.T) {
	clients := predictive.LocalConfig{Optimizer: "sgd", LearningRate: 0.05, Epochs: 2, BatchSize: 16}
	tests := []struct {
		name, options string
		wantMomentum  float64
		wantField     string
	}{
		{"the clients' SGD without momentum", `{"teachers": 2}`, 0, ""},
		{"its own SGD without momentum", `{"teachers": 2, "local": {"optimizer": "sgd", "epochs": 3}}`, 0, ""},
		{"the clients' optimizer, its momentum", `{"teachers": 2, "local": {"epochs": 3}}`, 0, ""},
		{"the clients' optimizer, its own momentum", `{"teachers": 2, "local": {"epochs": 3, "momentum": 0.5}}`, 0.5, ""},
		{"momentum 1", `{"teachers": 2, "local": {"momentum": 1}}`, 0, OptionsField + ".local.momentum"},
		{"negative momentum", `{"teachers": 2, "local": {"momentum": -0.5}}`, 0, OptionsField + ".local.momentum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := New(FedKTName, Settings{Kind: models.Deterministic, HasServer: true, Local: clients, Options: json.RawMessage(tt.options)})
			if tt.wantField != "" {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Field != tt.wantField {
					t.Fatalf("error %v; want one at %s", err, tt.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m := st.(*FedKT).Config.Local.Momentum; m != tt.wantMomentum {
				t.Errorf("teachers' momentum %v; want %v", m, tt.wantMomentum)
			}
		})
	}
}
