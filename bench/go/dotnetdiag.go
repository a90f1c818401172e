//go:build dotnetdiag

package main

import (
	"bytes"
	"fmt"
	"io"

	ddnettrace "github.com/pyroscope-io/dotnetdiag/nettrace"
	"github.com/pyroscope-io/dotnetdiag/nettrace/profiler"
)

func init() {
	jobs = append([]job{
		{"dd-decode", func(data []byte) (string, error) {
			return "", ddStream(data, nil)
		}},
		{"dd-samples", func(data []byte) (string, error) {
			var p profiler.SampleProfiler
			if err := ddStream(data, &p); err != nil {
				return "", err
			}
			return fmt.Sprintf("%d stacks", len(p.Samples())), nil
		}},
	}, jobs...)
}

func ddStream(data []byte, p *profiler.SampleProfiler) error {
	stream := ddnettrace.NewStream(bytes.NewReader(data))
	trace, err := stream.Open()
	if err != nil {
		return err
	}
	if p == nil {
		stream.EventHandler = func(*ddnettrace.Blob) error { return nil }
		stream.MetadataHandler = func(*ddnettrace.Metadata) error { return nil }
		stream.StackBlockHandler = func(*ddnettrace.StackBlock) error { return nil }
		stream.SequencePointBlockHandler = func(*ddnettrace.SequencePointBlock) error { return nil }
	} else {
		*p = *profiler.NewSampleProfiler(trace)
		stream.EventHandler = p.EventHandler
		stream.MetadataHandler = p.MetadataHandler
		stream.StackBlockHandler = p.StackBlockHandler
		stream.SequencePointBlockHandler = p.SequencePointBlockHandler
	}
	for {
		switch err := stream.Next(); err {
		case nil:
		case io.EOF:
			return nil
		default:
			return err
		}
	}
}
