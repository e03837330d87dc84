package matrix

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/rpcbed/rpcbed/internal/cluster"
	"github.com/rpcbed/rpcbed/internal/kube"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/swarm"
)

// The cluster placement on Kubernetes (a fake API server): a gang whose pods
// cannot start (the image is on no node) ends the ready step at once with
// kubelet's reason and the node, not after the ready timeout; and nothing of
// the gang is left.
func TestReadyStepEndsOnARejectedTask(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewSimpleClientset()
	kc, err := kube.New(ctx, cs, kube.Config{Namespace: "rpcbed"})
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	bar, err := swarm.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer bar.Close()
	spec := plan.Spec{Cluster: &plan.Cluster{Engine: plan.EngineKubernetes, ReadyTimeout: plan.Duration(time.Minute)}}
	e := &executor{run: &results.Run{Spec: spec}, o: Options{Dir: t.TempDir()}}
	sp := &swarmPlace{e: e, cl: kc, bar: bar, lost: map[string]string{}, gangs: map[string]*gang{}, formed: map[string]int{}}
	// kubelet's view, a moment after the pods reach their nodes
	go func() {
		for i := 0; i < 100; i++ {
			time.Sleep(50 * time.Millisecond)
			l, _ := cs.CoreV1().Pods("rpcbed").List(ctx, metav1.ListOptions{})
			if len(l.Items) < 2 {
				continue
			}
			for j, p := range l.Items {
				p.Spec.NodeName = []string{"rbkube-c1", "rbkube-c2"}[j]
				p.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "task",
					State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull",
						Message: `Container image "rpcbed/go:gone" is not present with pull policy of Never`}}}}}
				cs.CoreV1().Pods("rpcbed").Update(ctx, &p, metav1.UpdateOptions{})
			}
			return
		}
	}()
	nodes := []cluster.Node{{ID: "rbkube-c1", Addr: "198.18.3.2", Pool: "clients"}, {ID: "rbkube-c2", Addr: "198.18.3.3", Pool: "clients"}}
	t0 := time.Now()
	_, err = sp.form(ctx, &groupRun{key: "go-server"}, "go-grpc", "go", nodes)
	if err == nil || !strings.Contains(err.Error(), "a task ended before it reached the barrier") || !strings.Contains(err.Error(), "ErrImageNeverPull") ||
		!strings.Contains(err.Error(), "rpcbed/go:gone") {
		t.Fatalf("got %v; want the ready step ended by the rejected pods, with kubelet's reason", err)
	}
	// the watcher polls every 0.5 s; the ready timeout is a minute
	if d := time.Since(t0); d > 20*time.Second {
		t.Errorf("the ready step ended after %v; want it at once, not at its timeout", d)
	}
	if left, _ := kc.Left(ctx); len(left) != 0 {
		t.Errorf("pods left after the failed ready step: %v", left)
	}
}
