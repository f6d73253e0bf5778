// Command leasecandidate is a client-go leader-election candidate for the
// e2e tests of kubectl rv leases: it competes for a Lease with
// k8s.io/client-go/tools/leaderelection and logs, one JSON line each on
// stdout, when it starts and stops leading and who the leader is. With
// -configmap it also updates that ConfigMap every -write-every from the
// moment it starts leading until it exits, logging each successful write:
// the bug of a leader that keeps acting after it lost. It exits 2 seconds
// after it stops leading, as a controller that finishes its queue does,
// once its last write is done and logged.
//
// Its user agent is leasecand-ID, so the API server records its writes
// under the field manager leasecand-ID.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// mu guards stdout, so that log lines are whole.
var mu sync.Mutex

// quit stops the ConfigMap writer before the program exits; writing is
// done then, so that every write the server accepted is logged.
var (
	quit    = make(chan struct{})
	writing sync.WaitGroup
)

// logf writes one JSON line: {"event":..., "time":..., ...}.
func logf(event string, kv ...any) {
	m := map[string]any{"event": event, "time": time.Now().UTC().Format(time.RFC3339Nano)}
	for i := 0; i+1 < len(kv); i += 2 {
		m[fmt.Sprint(kv[i])] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	mu.Lock()
	defer mu.Unlock()
	fmt.Println(string(b))
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig")
	ns := flag.String("namespace", "", "namespace of the Lease")
	lease := flag.String("lease", "", "name of the Lease")
	id := flag.String("id", "", "identity")
	cm := flag.String("configmap", "", "ConfigMap to update while leading (and after)")
	leaseDuration := flag.Duration("lease-duration", 6*time.Second, "lease duration")
	renewDeadline := flag.Duration("renew-deadline", 4*time.Second, "renew deadline")
	retryPeriod := flag.Duration("retry-period", time.Second, "retry period")
	writeEvery := flag.Duration("write-every", 300*time.Millisecond, "ConfigMap write period")
	flag.Parse()

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(err)
	}
	cfg.UserAgent = "leasecand-" + *id + "/v0.0.0"
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()

	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: *ns, Name: *lease},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: *id},
	}
	stopped := make(chan struct{})
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: *leaseDuration, RenewDeadline: *renewDeadline, RetryPeriod: *retryPeriod,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				logf("started-leading", "id", *id)
				if *cm != "" {
					// Not stopped when leading stops: the bug under test.
					writing.Add(1)
					go writeLoop(cs, *ns, *cm, *id, *writeEvery)
				}
			},
			OnStoppedLeading: func() {
				logf("stopped-leading", "id", *id)
				close(stopped)
			},
			OnNewLeader: func(identity string) { logf("new-leader", "id", *id, "leader", identity) },
		},
	})
	select {
	case <-stopped:
		time.Sleep(2 * time.Second)
	default:
	}
	close(quit)
	writing.Wait()
	logf("exit", "id", *id)
}

// writeLoop updates the ConfigMap's data.writer to ID-N, N the loop's
// count, every period until the program exits; each write it logs carries
// its N, so a reader of the ConfigMap knows which writes it holds.
func writeLoop(cs kubernetes.Interface, ns, name, id string, every time.Duration) {
	defer writing.Done()
	for n := 0; ; n++ {
		select {
		case <-quit:
			return
		default:
		}
		c, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			if c.Data == nil {
				c.Data = map[string]string{}
			}
			c.Data["writer"] = fmt.Sprintf("%s-%d", id, n)
			sent := time.Now().UTC().Format(time.RFC3339Nano)
			if _, err = cs.CoreV1().ConfigMaps(ns).Update(context.Background(), c, metav1.UpdateOptions{}); err == nil {
				logf("configmap-write", "id", id, "n", n, "sent", sent)
			}
		} else {
			sent := time.Now().UTC().Format(time.RFC3339Nano)
			if _, err = cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"writer": fmt.Sprintf("%s-%d", id, n)}}, metav1.CreateOptions{}); err == nil {
				logf("configmap-write", "id", id, "n", n, "sent", sent)
			}
		}
		if err != nil {
			logf("configmap-error", "id", id, "error", err.Error())
		}
		time.Sleep(every)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
