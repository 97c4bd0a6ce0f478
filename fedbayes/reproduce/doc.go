// Package reproduce checks whether the findings of the papers fedbayes is built from hold here. For
// each paper it names the presets that reproduce its setting (engine presets for the parameter-space
// papers, predictive and multi-round FedBE presets for the predictive-space ones) at the paper's
// budget, the report's medium one or a reduced one, runs them (resuming finished runs), and writes
// docs/reproduction.md: our table beside the paper's numbers, figures, and for each qualitative
// finding whether it holds, with the evidence. A preset whose runs are not all done gets no verdict.
//
// The papers are in ../shared/papers (see docs/reproduction.md for the references):
//
//	000 Ozer et al. (2022)        Tables 1, 3 and 4      presets ozer2022-*
//	001 Fischer et al. (2024)     Tables 2-5             presets fischer2024-*
//	002 Jamoussi et al. (BA-BFL)  Table 1, Figs. 3-5     presets jamoussi-*
//	003 Hasan (2023)              Tables 3.1, B.5-B.7    predictive presets fmnist-*
//	004 Chen & Chao (FedBE)       non-IID CIFAR-10 table fedbe presets fedbe-fmnist-*
//
// The flow is one way: reproduce reads engine, predictive and results and draws with plots; nothing
// imports it but the fedbayes command.
package reproduce
