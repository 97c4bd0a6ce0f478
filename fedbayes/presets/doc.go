// Package presets holds the named experiments of fedbayes: engine specs that reproduce a paper's
// setting at its budget, and the cuts of each to smaller budgets (NAME-reduced, NAME-medium, the claim
// presets). One file per paper: ozer2022.go (Ozer et al. (2022) and its BFL-P mode), fischer2024.go
// (Fischer et al. (2024)), jamoussi.go (Jamoussi et al., BA-BFL), hasan.go (Hasan (2023)'s one-round
// comparisons), chen.go (Chen & Chao's FedBE); medium.go and claims.go cut them to the reproduction
// report's budgets, and registry.go names them (Preset, PresetNames, PresetAbout) and cuts any spec
// for a quick look (Fast).
//
// A preset is an ordinary engine.Spec: `fedbayes run NAME -print` shows it, and engine.Run runs it.
// The package imports engine and engine never imports it: the engine holds the round loop, the spec and
// its validation, and the presets are data written with the spec's exported fields.
package presets
