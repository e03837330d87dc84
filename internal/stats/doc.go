// Package stats holds the statistics rpcbed computes from measured figures; it
// measures nothing and prints nothing. hist.go: the latency records every client
// writes (HdrHistogram's V2 encoding), their exact merge and their percentiles.
package stats
