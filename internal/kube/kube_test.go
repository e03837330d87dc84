package kube

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/rpcbed/rpcbed/internal/swarm"
)

func node(name, pool, addr string, ready, cordoned bool) *corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{PoolLabel: pool}},
		Spec:       corev1.NodeSpec{Unschedulable: cordoned},
		Status: corev1.NodeStatus{
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalIP, Address: addr}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}},
		},
	}
}

func newFake(t *testing.T, cfg Config, objs ...*corev1.Node) (*Cluster, *fake.Clientset) {
	t.Helper()
	cs := fake.NewSimpleClientset()
	for _, n := range objs {
		if _, err := cs.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := New(context.Background(), cs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, cs
}

// The gang check counts Ready, schedulable nodes per pool before anything is
// created, and names the short pool with why each of its other nodes is out.
func TestGang(t *testing.T) {
	nodes := []*corev1.Node{
		node("rbkube-server", "server", "198.18.3.1", true, false),
		node("rbkube-c1", "clients", "198.18.3.2", true, false),
		node("rbkube-c2", "clients", "198.18.3.3", false, false),
		node("rbkube-c3", "clients", "198.18.3.4", true, true),
	}
	c, _ := newFake(t, Config{Namespace: "rpcbed"}, nodes...)
	tests := []struct {
		name    string
		want    map[string]int
		exclude map[string]string
		err     []string // substrings of the error; none: no error
		got     int      // usable client nodes
	}{
		{name: "enough", want: map[string]int{"server": 1, "clients": 1}, got: 1},
		{name: "short clients", want: map[string]int{"server": 1, "clients": 2}, got: 1,
			err: []string{"pool clients has 1 usable node(s), needs 2", "rbkube-c2", "down/active", "rbkube-c3", "ready/drain"}},
		{name: "lost node", want: map[string]int{"clients": 1}, exclude: map[string]string{"rbkube-c1": "killed"},
			err: []string{"pool clients has 0 usable node(s), needs 1", "rbkube-c1", "lost: killed"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			by, err := c.Gang(context.Background(), tc.want, tc.exclude)
			if len(tc.err) == 0 {
				if err != nil {
					t.Fatalf("got %v; want no error", err)
				}
			} else {
				if err == nil || !errors.Is(err, swarm.ErrShortPool) {
					t.Fatalf("got %v; want a short pool", err)
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q; want it to say %q", err, w)
					}
				}
			}
			if tc.got > 0 && len(by["clients"]) != tc.got {
				t.Errorf("got %d client nodes; want %d", len(by["clients"]), tc.got)
			}
			if len(by["clients"]) > 0 && by["clients"][0].Addr != "198.18.3.2" {
				t.Errorf("got address %q; want the node's InternalIP 198.18.3.2", by["clients"][0].Addr)
			}
		})
	}
}

// A task's pod: the node's network, placed by pool label (and node, and away
// from lost nodes), one per node of its set, owned by the run's ConfigMap,
// never pulled without an image prefix, no token mounted, the TTL as its
// deadline, and swarm's task and node templates as the downward API.
func TestPodSpec(t *testing.T) {
	c, _ := newFake(t, Config{Namespace: "rpcbed", TTL: time.Hour})
	s := swarm.Service{Name: "go-server", Image: "rpcbed/go:latest", Entrypoint: "/bin/bash", Args: []string{"-c", "x"},
		Env:  append([]string{"A=1"}, swarm.TaskEnv("198.19.3.2:4000", "tok")...),
		Pool: "clients", Exclude: []string{"rbkube-c2"}, CPUs: 1.5, MemoryMB: 512}
	p := c.PodSpec(s, "rpcbed-go-abc", "rpcbed-go-abc-1")
	sp := p.Spec
	if !sp.HostNetwork || sp.RestartPolicy != corev1.RestartPolicyNever || *sp.AutomountServiceAccountToken || *sp.ActiveDeadlineSeconds != 3600 {
		t.Errorf("got hostNetwork %v, restart %s, token %v, deadline %d; want true, Never, false, 3600",
			sp.HostNetwork, sp.RestartPolicy, *sp.AutomountServiceAccountToken, *sp.ActiveDeadlineSeconds)
	}
	term := sp.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0]
	if e := term.MatchExpressions[0]; e.Key != "rpcbed.pool" || e.Operator != corev1.NodeSelectorOpIn || e.Values[0] != "clients" {
		t.Errorf("got pool term %+v; want rpcbed.pool In [clients]", e)
	}
	if f := term.MatchFields[0]; f.Key != "metadata.name" || f.Operator != corev1.NodeSelectorOpNotIn || f.Values[0] != "rbkube-c2" {
		t.Errorf("got field term %+v; want metadata.name NotIn [rbkube-c2]", f)
	}
	anti := sp.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	if anti.TopologyKey != "kubernetes.io/hostname" || anti.LabelSelector.MatchLabels[LabelService] != "rpcbed-go-abc" {
		t.Errorf("got anti-affinity %+v; want one pod of the set per hostname", anti)
	}
	if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Kind != "ConfigMap" || p.OwnerReferences[0].Name != "rpcbed-run-"+c.ID {
		t.Errorf("got owners %+v; want the run's ConfigMap", p.OwnerReferences)
	}
	if p.Labels[LabelRun] != c.ID || p.Labels[LabelManaged] != "rpcbed" {
		t.Errorf("got labels %v; want the run's", p.Labels)
	}
	ct := sp.Containers[0]
	if ct.Image != "rpcbed/go:latest" || ct.ImagePullPolicy != corev1.PullNever || ct.Command[0] != "/bin/bash" {
		t.Errorf("got image %s pull %s command %v; want rpcbed/go:latest, Never, /bin/bash", ct.Image, ct.ImagePullPolicy, ct.Command)
	}
	if q := ct.Resources.Limits[corev1.ResourceCPU]; q.MilliValue() != 1500 {
		t.Errorf("got cpu limit %s; want 1500m", q.String())
	}
	env := map[string]corev1.EnvVar{}
	for _, v := range ct.Env {
		env[v.Name] = v
	}
	if env["A"].Value != "1" || env["RPCBED_BARRIER"].Value != "198.19.3.2:4000" {
		t.Errorf("got env %+v; want A=1 and the barrier", ct.Env)
	}
	if f := env["RPCBED_TASK"].ValueFrom; f == nil || f.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("got RPCBED_TASK %+v; want the pod's name", env["RPCBED_TASK"])
	}
	if f := env["RPCBED_NODE"].ValueFrom; f == nil || f.FieldRef.FieldPath != "spec.nodeName" {
		t.Errorf("got RPCBED_NODE %+v; want the pod's node", env["RPCBED_NODE"])
	}

	s.Node, s.Exclude = "rbkube-server", nil
	c.cfg.ImagePrefix = "registry.example/"
	p = c.PodSpec(s, "x", "x-1")
	ct = p.Spec.Containers[0]
	if ct.Image != "registry.example/rpcbed/go:latest" || ct.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("with a prefix got %s %s; want registry.example/rpcbed/go:latest IfNotPresent", ct.Image, ct.ImagePullPolicy)
	}
	f := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0]
	if f.Operator != corev1.NodeSelectorOpIn || f.Values[0] != "rbkube-server" {
		t.Errorf("got %+v; want metadata.name In [rbkube-server]", f)
	}
}

// A pod as a task: a container that cannot start (a missing image) is
// rejected at once with kubelet's reason, not left pending.
func TestTaskOf(t *testing.T) {
	waiting := func(reason, msg string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{NodeName: "n1"},
			Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}}}
	}
	ended := func(phase corev1.PodPhase, code int32) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{NodeName: "n1"},
			Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}}}}}}
	}
	tests := []struct {
		name  string
		pod   corev1.Pod
		state string
		ended bool
		code  int
		err   string
	}{
		{name: "image missing", pod: waiting("ErrImageNeverPull", `Container image "rpcbed/nope:1" is not present with pull policy of Never`),
			state: "rejected", ended: true, err: `ErrImageNeverPull: Container image "rpcbed/nope:1" is not present`},
		{name: "creating", pod: waiting("ContainerCreating", ""), state: "assigned"},
		{name: "unscheduled", pod: corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available"}}}},
			state: "pending", err: "Unschedulable: 0/3 nodes are available"},
		{name: "running", pod: corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}, state: "running"},
		{name: "complete", pod: ended(corev1.PodSucceeded, 0), state: "complete", ended: true},
		{name: "failed", pod: ended(corev1.PodFailed, 3), state: "failed", ended: true, code: 3, err: "Error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := TaskOf(tc.pod)
			if got.State != tc.state || got.Ended() != tc.ended || got.ExitCode != tc.code || !strings.Contains(got.Err, tc.err) {
				t.Errorf("got %s ended=%v exit %d err %q; want %s ended=%v exit %d err containing %q",
					got.State, got.Ended(), got.ExitCode, got.Err, tc.state, tc.ended, tc.code, tc.err)
			}
		})
	}
}

// Create makes one pod per replica; Close deletes every pod of the run and its
// ConfigMap, and a later run deletes an earlier run whose TTL passed.
func TestCreateClose(t *testing.T) {
	ctx := context.Background()
	c, cs := newFake(t, Config{Namespace: "rpcbed"})
	svc, err := c.Create(ctx, swarm.Service{Name: "java-grpc g1", Image: "rpcbed/java:latest", Pool: "clients", Replicas: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(svc, "rpcbed-java-grpc-g1-") {
		t.Errorf("got set %q; want a DNS-1123 name from the service's", svc)
	}
	ts, err := c.Tasks(ctx, svc)
	if err != nil || len(ts) != 2 {
		t.Fatalf("got %d tasks (%v); want 2", len(ts), err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	pods, _ := cs.CoreV1().Pods("rpcbed").List(ctx, metav1.ListOptions{})
	cms, _ := cs.CoreV1().ConfigMaps("rpcbed").List(ctx, metav1.ListOptions{})
	if len(pods.Items) != 0 || len(cms.Items) != 0 {
		t.Errorf("after Close got %d pods and %d ConfigMaps; want none", len(pods.Items), len(cms.Items))
	}

	// an expired run (a killed driver's) goes when the next run starts; a live one stays
	old, err := New(ctx, cs, Config{Namespace: "rpcbed", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Create(ctx, swarm.Service{Name: "old", Image: "x"}); err != nil {
		t.Fatal(err)
	}
	cm, _ := cs.CoreV1().ConfigMaps("rpcbed").Get(ctx, "rpcbed-run-"+old.ID, metav1.GetOptions{})
	cm.Annotations[AnnotationTTL] = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	cs.CoreV1().ConfigMaps("rpcbed").Update(ctx, cm, metav1.UpdateOptions{})
	live, _ := New(ctx, cs, Config{Namespace: "rpcbed"})
	if _, err := live.Create(ctx, swarm.Service{Name: "live", Image: "x"}); err != nil {
		t.Fatal(err)
	}
	if left, _ := old.Left(ctx); len(left) != 0 {
		t.Errorf("the expired run's pods %v are left; want them deleted", left)
	}
	fresh, _ := New(ctx, cs, Config{Namespace: "rpcbed"})
	if left, _ := live.Left(ctx); len(left) != 1 {
		t.Errorf("a live run has %v after another run started; want its one pod", left)
	}
	fresh.Close()
	live.Close()
}

// A kubeconfig whose API server does not answer is refused within seconds,
// naming the field.
func TestAttachUnreachable(t *testing.T) {
	dir := t.TempDir()
	kc := dir + "/kubeconfig"
	// 127.0.0.1:1: nothing listens there
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: x, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: x, user: {token: t}}]
contexts: [{name: x, context: {cluster: x, user: x}}]
current-context: x
`
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err := Attach(context.Background(), Config{Kubeconfig: kc})
	if err == nil || !strings.Contains(err.Error(), "cluster.kubeconfig "+kc) || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("got %v; want cluster.kubeconfig ... does not answer", err)
	}
	// bounded by answerTimeout (10 s); a refused port answers in milliseconds
	if d := time.Since(t0); d > 11*time.Second {
		t.Errorf("refused after %v; want within 10 s", d)
	}
	if _, err := Attach(context.Background(), Config{Kubeconfig: dir + "/none"}); err == nil || !strings.Contains(err.Error(), "cluster.kubeconfig") {
		t.Errorf("a missing kubeconfig gave %v; want an error naming cluster.kubeconfig", err)
	}
}
