// Package explore is the aggregation-geometry explorer for notebooks: K = 2 to 5 univariate
// Gaussian clients, each with a mean, a variance and a weight on a slider, a rule selector ("every
// rule" or one), and the densities of the clients, of the exact mixture and of each rule's
// aggregate drawn live (plots.Update), with the aggregated means and variances in a table updated
// in place. It is the interactive form of the toy figures of Ozer et al. (2022), Fig. 1 and
// Jamoussi et al. (BA-BFL), Fig. 1.
//
// The package has two layers:
//
//   - plain, unit-tested functions: Scale maps integer slider positions to real values, Controls
//     holds every widget's position and turns into a State, and Render turns a State into a View
//     (the chart, one Row per rule and the HTML table);
//   - Run, a thin GoNB layer that displays the View and a panel of controls whose script sends the
//     whole control state with a sequence number on each change (Message, ParseMessage; the newest
//     wins), and redraws on each change.
//
// Headless runs (nbconvert, `make test`, with FEDBAYES_HEADLESS=1) have no page to answer: Run then
// renders the initial state once and returns (see Mode, HeadlessEnv and docs/explorer.md).
package explore
