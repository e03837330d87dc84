package kube

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/runner"
	"github.com/rpcbed/rpcbed/internal/swarm"
)

// TestLiveMissingImage, on a real cluster (RPCBED_KUBE_KUBECONFIG: make
// matrix-kube-fault sets it to make kube-up's runner kubeconfig): an image
// that no node has is a clear error naming it, not a hang — a server that
// would start from it fails at once with kubelet's reason, and a gang's pods
// are rejected, not left pending.
func TestLiveMissingImage(t *testing.T) {
	kc := os.Getenv("RPCBED_KUBE_KUBECONFIG")
	if kc == "" {
		t.Skip("make matrix-kube-fault runs this on a cluster (RPCBED_KUBE_KUBECONFIG)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Attach(ctx, Config{Kubeconfig: kc})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}()
	const image = "rpcbed/missing:none"
	t0 := time.Now()
	r := &swarm.Runner{C: c, Pool: "server"}
	_, err = r.Start(ctx, runner.Task{Name: "missing-server", Image: image, Args: []string{"/bin/true"}, Timeout: 90 * time.Second})
	// kubelet reports ErrImageNeverPull within a second or two of the pod
	// reaching its node; 30 s leaves room for a busy machine's scheduler.
	if err == nil || !strings.Contains(err.Error(), "ErrImageNeverPull") || !strings.Contains(err.Error(), image) {
		t.Errorf("start: got %v; want ErrImageNeverPull naming %s", err, image)
	}
	if d := time.Since(t0); d > 30*time.Second {
		t.Errorf("start failed after %v; want within 30 s", d)
	}
	svc, err := c.Create(ctx, swarm.Service{Name: "missing-gang", Image: image, Pool: "clients", Replicas: 2})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := swarm.WaitEnded(ctx, c, svc, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range ts {
		if tk.State != "rejected" || !strings.Contains(tk.Err, image) {
			t.Errorf("pod %s on %s: %s %q; want rejected naming %s", tk.ID, tk.NodeID, tk.State, tk.Err, image)
		}
	}
}
