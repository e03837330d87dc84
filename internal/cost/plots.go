package cost

// WritePlots draws the cost plots into dir/plots (plots.go in a later step).
func WritePlots(dir string, r *Result, t Timed) error { return nil }
