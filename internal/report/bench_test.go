package report

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func BenchmarkParse(b *testing.B) {
	for _, name := range []string{"ab-go-datalist-200-c50-k", "write-full"} {
		text, err := os.ReadFile("testdata/" + name + ".txt")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(bytes.NewReader(text)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkWrite(b *testing.B) {
	r := fullReport()
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFromSamples(b *testing.B) {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := range int64(100000) {
		h.RecordValue(1000 + i%50000)
	}
	s := Samples{Concurrency: 50, Elapsed: 2 * time.Second, Complete: 100000, Latency: h,
		Rpcbed: &Extra{Client: "go"}}
	b.ReportAllocs()
	for b.Loop() {
		FromSamples(s)
	}
}
