// Package matrix runs the test bed's main job: every client x protocol x call x
// items x concurrency cell of a spec, against servers it starts once per server
// configuration, through a runner.Runner (containers or local processes). It keeps
// every cell's raw output and writes one result file per cell atomically, so a
// crash loses only the running cell and Resume finishes the rest. What to run is
// internal/plan's, what was measured internal/results' (the run directory), and
// rendering it internal/render's.
package matrix
