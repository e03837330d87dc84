// Package kube runs rpcbed's cluster placement on Kubernetes through client-go:
// the nodes of each pool (by the rpcbed.pool node label), and a "service" of
// internal/swarm's shape as a set of pods, one per node (required anti-affinity
// within the set), placed by pool and node and kept off lost nodes by node
// affinity. The matrix's cluster placement drives it exactly as it drives a
// Docker Swarm: the gang check, the tasks dialling the driver's ready barrier,
// a common start, the merge.
//
// Every pod carries the run's labels and is owned by one ConfigMap per run, so
// deleting that ConfigMap (Close does, on every exit path; a later Attach does
// for a run whose TTL passed) deletes the run; each pod's activeDeadlineSeconds
// is the TTL a killed driver leaves behind. What the runner needs is a
// namespaced Role (docs/kube-role.yaml): pods, pods/log, configmaps, and reading
// nodes.
package kube

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rpcbed/rpcbed/internal/cluster"
	"github.com/rpcbed/rpcbed/internal/swarm"
)

// Labels and annotations on every object of a run.
const (
	LabelManaged  = "app.kubernetes.io/managed-by" // = rpcbed
	LabelRun      = "rpcbed.io/run"
	LabelService  = "rpcbed.io/service"
	AnnotationTTL = "rpcbed.io/expires-at" // RFC 3339, on the run's ConfigMap
	PoolLabel     = swarm.PoolLabel        // the node label a pool is
)

// Config is how to reach a cluster and what a run may leave there.
type Config struct {
	Kubeconfig string
	Namespace  string
	// ImagePrefix, when set, is put before every image and the images are
	// pulled (IfNotPresent) from the user's registry; without it the images
	// must be on every node already (imported into its containerd) and are
	// never pulled (imagePullPolicy Never).
	ImagePrefix string
	// TTL bounds what a run leaves: every pod's activeDeadlineSeconds, and the
	// run's ConfigMap's expiry (a later run deletes an expired one).
	TTL time.Duration
}

// Cluster is one run's handle on a Kubernetes cluster.
type Cluster struct {
	cs     kubernetes.Interface
	cfg    Config
	ID     string // the run's id: the rpcbed.io/run label
	Server string // the API server's URL, for the record
	owner  metav1.OwnerReference

	mu   sync.Mutex
	svcs map[string]bool
}

// answerTimeout bounds every API call made on a run's exit path, and the
// first call that says whether the API server answers at all.
const answerTimeout = 10 * time.Second

// Attach connects to the cluster of cfg.Kubeconfig and creates the run's
// owner ConfigMap. An API server that does not answer within 10 s is an
// error naming the kubeconfig; so is one that refuses the run's namespace.
func Attach(ctx context.Context, cfg Config) (*Cluster, error) {
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: cfg.Kubeconfig}, &clientcmd.ConfigOverrides{})
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("cluster.kubeconfig %s: %s", cfg.Kubeconfig, oneLine(err))
	}
	if cfg.Namespace == "" {
		if ns, _, err := cc.Namespace(); err == nil {
			cfg.Namespace = ns
		}
	}
	rc.Timeout = answerTimeout
	rc.QPS, rc.Burst = 50, 100
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("cluster.kubeconfig %s: %w", cfg.Kubeconfig, err)
	}
	actx, cancel := context.WithTimeout(ctx, answerTimeout)
	defer cancel()
	if _, err := cs.Discovery().RESTClient().Get().AbsPath("/version").Do(actx).Raw(); err != nil {
		return nil, fmt.Errorf("cluster.kubeconfig %s: the API server at %s does not answer: %s", cfg.Kubeconfig, rc.Host, oneLine(err))
	}
	c, err := New(actx, cs, cfg)
	if err != nil {
		return nil, err
	}
	c.Server = rc.Host
	return c, nil
}

// New starts a run on a cluster reached through cs: it deletes runs whose TTL
// passed, then creates this run's owner ConfigMap.
func New(ctx context.Context, cs kubernetes.Interface, cfg Config) (*Cluster, error) {
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 6 * time.Hour
	}
	c := &Cluster{cs: cs, cfg: cfg, ID: newID(), svcs: map[string]bool{}}
	c.sweepExpired(ctx)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:        "rpcbed-run-" + c.ID,
		Labels:      map[string]string{LabelManaged: "rpcbed", LabelRun: c.ID},
		Annotations: map[string]string{AnnotationTTL: time.Now().Add(cfg.TTL).UTC().Format(time.RFC3339)},
	}, Data: map[string]string{"about": "rpcbed run " + c.ID + ": every pod of the run is owned by this ConfigMap; deleting it deletes them"}}
	got, err := cs.CoreV1().ConfigMaps(cfg.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("cluster.namespace %s: creating the run's ConfigMap: %s", cfg.Namespace, oneLine(err))
	}
	c.owner = metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: got.Name, UID: got.UID}
	return c, nil
}

// sweepExpired deletes the ConfigMaps (and so the pods) of earlier runs whose
// TTL passed: what a killed driver left.
func (c *Cluster) sweepExpired(ctx context.Context) {
	l, err := c.cs.CoreV1().ConfigMaps(c.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelManaged + "=rpcbed"})
	if err != nil {
		return
	}
	for _, cm := range l.Items {
		t, err := time.Parse(time.RFC3339, cm.Annotations[AnnotationTTL])
		if err != nil || time.Now().Before(t) {
			continue
		}
		c.deleteRun(ctx, cm.Labels[LabelRun], cm.Name)
	}
}

func (c *Cluster) deleteRun(ctx context.Context, run, cm string) error {
	err := c.deletePods(ctx, LabelRun+"="+run, 0)
	bg := metav1.DeletePropagationBackground
	if cerr := c.cs.CoreV1().ConfigMaps(c.cfg.Namespace).Delete(ctx, cm, metav1.DeleteOptions{PropagationPolicy: &bg}); cerr != nil && !apierrors.IsNotFound(cerr) {
		err = errors.Join(err, fmt.Errorf("deleting ConfigMap %s: %s", cm, oneLine(cerr)))
	}
	return err
}

// deletePods deletes the pods selector selects, each with grace seconds to
// stop (0: the object goes at once, whether or not its node answers).
func (c *Cluster) deletePods(ctx context.Context, selector string, grace int64) error {
	pods := c.cs.CoreV1().Pods(c.cfg.Namespace)
	l, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("pods %s: %s", selector, oneLine(err))
	}
	var errs []error
	for _, p := range l.Items {
		if derr := pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); derr != nil && !apierrors.IsNotFound(derr) {
			errs = append(errs, fmt.Errorf("deleting pod %s: %s", p.Name, oneLine(derr)))
		}
	}
	return errors.Join(errs...)
}

// Namespace is where the run's objects are.
func (c *Cluster) Namespace() string { return c.cfg.Namespace }

// Nodes lists the cluster's nodes: id and hostname are the node's name, the
// address its InternalIP, the pool its rpcbed.pool label; State is ready or
// down (its Ready condition), Availability active or drain (cordoned).
func (c *Cluster) Nodes(ctx context.Context) ([]cluster.Node, error) {
	l, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("nodes: %s", oneLine(err))
	}
	var nodes []cluster.Node
	for _, n := range l.Items {
		nodes = append(nodes, nodeOf(n))
	}
	sort.Slice(nodes, func(i, j int) bool {
		if nodes[i].Pool != nodes[j].Pool {
			return nodes[i].Pool < nodes[j].Pool
		}
		return nodes[i].ID < nodes[j].ID
	})
	return nodes, nil
}

func nodeOf(n corev1.Node) cluster.Node {
	x := cluster.Node{ID: n.Name, Hostname: n.Name, Pool: n.Labels[PoolLabel], State: "down", Availability: "active"}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			x.Addr = a.Address
			break
		}
	}
	for _, cnd := range n.Status.Conditions {
		if cnd.Type == corev1.NodeReady && cnd.Status == corev1.ConditionTrue {
			x.State = "ready"
		}
	}
	if n.Spec.Unschedulable {
		x.Availability = "drain"
	}
	return x
}

// Gang checks, before anything is created, that every pool has at least want
// Ready, schedulable nodes not in exclude, and returns them by pool; the error
// (wrapping swarm.ErrShortPool) names every short pool.
func (c *Cluster) Gang(ctx context.Context, want map[string]int, exclude map[string]string) (map[string][]cluster.Node, error) {
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	return swarm.GangOf(nodes, want, exclude)
}

var dnsUnsafe = regexp.MustCompile(`[^a-z0-9-]+`)

// podBase makes a DNS-1123 name stem of at most 40 characters from s.
func podBase(s string) string {
	s = strings.Trim(dnsUnsafe.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	return s
}

// Create creates s as s.Replicas pods (never restarted: a task that ends is
// not replaced), one per node, and returns the set's name. It does not wait
// for them.
func (c *Cluster) Create(ctx context.Context, s swarm.Service) (string, error) {
	if s.Replicas < 1 {
		s.Replicas = 1
	}
	svc := "rpcbed-" + podBase(s.Name) + "-" + newID()[:6]
	c.mu.Lock()
	c.svcs[svc] = true
	c.mu.Unlock()
	for i := range s.Replicas {
		p := c.PodSpec(s, svc, fmt.Sprintf("%s-%d", svc, i+1))
		if _, err := c.cs.CoreV1().Pods(c.cfg.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			c.Remove(svc)
			return "", fmt.Errorf("creating pod %s of %s: %s", p.Name, s.Name, oneLine(err))
		}
	}
	return svc, nil
}

// PodSpec is one pod of s, in the set svc: the node's network (the server's
// ports and the barrier are the node's), placed by pool (and node, and away
// from excluded nodes) with at most one pod of the set per node, the image
// never pulled unless an image prefix names a registry, no service account
// token mounted, and the run's TTL as its active deadline.
func (c *Cluster) PodSpec(s swarm.Service, svc, name string) *corev1.Pod {
	labels := map[string]string{LabelManaged: "rpcbed", LabelRun: c.ID, LabelService: svc}
	var terms []corev1.NodeSelectorRequirement
	var fields []corev1.NodeSelectorRequirement
	if s.Pool != "" {
		terms = append(terms, corev1.NodeSelectorRequirement{Key: PoolLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{s.Pool}})
	}
	if s.Node != "" {
		fields = append(fields, corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{s.Node}})
	}
	if len(s.Exclude) > 0 {
		fields = append(fields, corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: s.Exclude})
	}
	image, pull := s.Image, corev1.PullNever
	if c.cfg.ImagePrefix != "" {
		image, pull = strings.TrimSuffix(c.cfg.ImagePrefix, "/")+"/"+s.Image, corev1.PullIfNotPresent
	}
	ct := corev1.Container{Name: "task", Image: image, Args: s.Args, ImagePullPolicy: pull, Env: envOf(s.Env)}
	if s.Entrypoint != "" {
		ct.Command = []string{s.Entrypoint}
	}
	if s.CPUs > 0 || s.MemoryMB > 0 {
		ct.Resources.Limits = corev1.ResourceList{}
		if s.CPUs > 0 {
			ct.Resources.Limits[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(s.CPUs*1000), resource.DecimalSI)
		}
		if s.MemoryMB > 0 {
			ct.Resources.Limits[corev1.ResourceMemory] = *resource.NewQuantity(int64(s.MemoryMB)<<20, resource.BinarySI)
		}
	}
	no, grace, ttl := false, int64(10), int64(c.cfg.TTL/time.Second)
	owner := c.owner
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.cfg.Namespace, Labels: labels, OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			HostNetwork:                   true,
			DNSPolicy:                     corev1.DNSDefault,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			TerminationGracePeriodSeconds: &grace,
			ActiveDeadlineSeconds:         &ttl,
			Containers:                    []corev1.Container{ct},
			Affinity: &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: terms, MatchFields: fields}},
				}},
				PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelService: svc}},
					TopologyKey:   "kubernetes.io/hostname",
				}}},
			},
		},
	}
}

// envOf turns KEY=VALUE lines into a container's environment; swarm's task
// and node templates (swarm.TaskEnv) become the pod's name and node name.
func envOf(env []string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch v {
		case "{{.Task.ID}}":
			out = append(out, corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}})
		case "{{.Node.ID}}":
			out = append(out, corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}})
		default:
			out = append(out, corev1.EnvVar{Name: k, Value: v})
		}
	}
	return out
}

// stuck are the waiting reasons of a container that will not start without a
// change by hand: its task is rejected at once rather than waited for.
var stuck = map[string]bool{"ErrImageNeverPull": true, "ErrImagePull": true, "ImagePullBackOff": true,
	"InvalidImageName": true, "CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true}

// Tasks lists the set's pods as swarm tasks, by name: pending (or assigned
// once scheduled), running, complete, failed; rejected for a pod whose
// container cannot start (a missing image: the reason and kubelet's message);
// orphaned for a pod still running on a node that is no longer Ready.
func (c *Cluster) Tasks(ctx context.Context, svc string) ([]swarm.Task, error) {
	l, err := c.cs.CoreV1().Pods(c.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelService + "=" + svc})
	if err != nil {
		return nil, fmt.Errorf("pods of %s: %s", svc, oneLine(err))
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	var down map[string]bool
	var ts []swarm.Task
	for _, p := range l.Items {
		t := TaskOf(p)
		if t.State == "running" {
			if down == nil {
				down = map[string]bool{}
				if nodes, err := c.Nodes(ctx); err == nil {
					for _, n := range nodes {
						down[n.ID] = n.State != "ready"
					}
				}
			}
			if down[t.NodeID] {
				t.State, t.Err = "orphaned", "its node "+t.NodeID+" is not Ready"
			}
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// TaskOf is a pod as a swarm task.
func TaskOf(p corev1.Pod) swarm.Task {
	t := swarm.Task{ID: p.Name, NodeID: p.Spec.NodeName, DesiredState: "running", Message: p.Status.Message}
	switch p.Status.Phase {
	case corev1.PodRunning:
		t.State = "running"
	case corev1.PodSucceeded:
		t.State = "complete"
	case corev1.PodFailed:
		t.State, t.Err = "failed", strings.TrimSpace(p.Status.Reason+" "+p.Status.Message)
	default:
		t.State = "pending"
		if t.NodeID != "" {
			t.State = "assigned"
		}
		for _, cnd := range p.Status.Conditions {
			if cnd.Type == corev1.PodScheduled && cnd.Status == corev1.ConditionFalse {
				t.Err = strings.TrimSpace(cnd.Reason + ": " + cnd.Message)
			}
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && stuck[w.Reason] {
			t.State, t.Err = "rejected", w.Reason+": "+w.Message
		}
		if x := cs.State.Terminated; x != nil {
			t.ExitCode = int(x.ExitCode)
			if t.State == "failed" && x.Reason != "" {
				t.Err = strings.TrimSpace(x.Reason + " " + x.Message)
			}
		}
	}
	if p.DeletionTimestamp != nil {
		t.DesiredState = "shutdown"
	}
	return t
}

// WaitTasks waits until the set has n pods that ended, or ctx ends.
func (c *Cluster) WaitTasks(ctx context.Context, svc string, n int) ([]swarm.Task, error) {
	return swarm.WaitEnded(ctx, c, svc, n)
}

// Logs is every pod's log so far (stdout and stderr together: Kubernetes
// keeps one stream), each line prefixed with its pod and node, with
// timestamps, as `docker service logs` prints a service's.
func (c *Cluster) Logs(ctx context.Context, svc string) (stdout, stderr []byte, err error) {
	l, err := c.cs.CoreV1().Pods(c.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelService + "=" + svc})
	if err != nil {
		return nil, nil, fmt.Errorf("logs of %s: %s", svc, oneLine(err))
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	var out bytes.Buffer
	var errs []error
	for _, p := range l.Items {
		b, lerr := c.cs.CoreV1().Pods(c.cfg.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Timestamps: true}).DoRaw(ctx)
		if lerr != nil {
			errs = append(errs, fmt.Errorf("logs of pod %s on %s: %s", p.Name, p.Spec.NodeName, oneLine(lerr)))
			continue
		}
		prefix := p.Name + "@" + p.Spec.NodeName + " | "
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if line != "" {
				out.WriteString(prefix + line)
			}
		}
	}
	return out.Bytes(), nil, errors.Join(errs...)
}

// Stop keeps the set's logs, then deletes its pods (SIGTERM and a 10 s grace)
// and waits, within ctx, until they are gone.
func (c *Cluster) Stop(ctx context.Context, svc string) (stdout, stderr []byte, err error) {
	stdout, stderr, err = c.Logs(ctx, svc)
	pods := c.cs.CoreV1().Pods(c.cfg.Namespace)
	if derr := c.deletePods(ctx, LabelService+"="+svc, 10); derr != nil {
		return stdout, stderr, errors.Join(err, derr)
	}
	for ctx.Err() == nil {
		l, lerr := pods.List(ctx, metav1.ListOptions{LabelSelector: LabelService + "=" + svc})
		if lerr == nil && len(l.Items) == 0 {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	return stdout, stderr, err
}

// Remove deletes the set's pods at once (grace 0: its output was read).
func (c *Cluster) Remove(svc string) error {
	ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
	defer cancel()
	if err := c.deletePods(ctx, LabelService+"="+svc, 0); err != nil {
		return err
	}
	c.mu.Lock()
	delete(c.svcs, svc)
	c.mu.Unlock()
	return nil
}

// Left lists the run's pods that still exist.
func (c *Cluster) Left(ctx context.Context) ([]string, error) {
	l, err := c.cs.CoreV1().Pods(c.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelRun + "=" + c.ID})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range l.Items {
		names = append(names, p.Name)
	}
	return names, nil
}

// Close deletes every pod of the run and the run's ConfigMap, and waits
// (within 30 s) until no pod of the run is left. It runs on every exit path;
// each call is bounded.
func (c *Cluster) Close() error {
	if c == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	derr := c.deleteRun(ctx, c.ID, c.owner.Name)
	var left []string
	var err error
	for {
		left, err = c.Left(ctx)
		if err == nil && len(left) == 0 {
			return derr
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("clean-up: %s", oneLine(err))
			}
			return fmt.Errorf("clean-up: pods of run %s still exist after 30 s: %s", c.ID, strings.Join(left, ", "))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func newID() string {
	var b [5]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func oneLine(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
