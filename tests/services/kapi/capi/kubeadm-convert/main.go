// kubeadm-convert serves the CRD conversion webhook (/convert) of the kubeadm bootstrap and
// kubeadm control-plane API groups, v1beta1 <-> v1beta2, for OpenKeel's test rig only
// (tests/services/kapi.sh).
//
// In a real management cluster that webhook is served by the kubeadm bootstrap and control-plane
// managers. The rig does not run them (their controllers would act on Machines and try to reach
// workload clusters; a scripted stand-in plays their status instead), but magnum-cluster-api
// writes KubeadmControlPlaneTemplate and KubeadmConfigTemplate as v1beta1 while the CRDs store
// v1beta2. This program runs Cluster API's own conversion functions (the ConvertTo/ConvertFrom
// methods of sigs.k8s.io/cluster-api/api/.../v1beta1) behind controller-runtime's conversion
// handler, exactly as those managers do, and nothing else: no controllers, no admission.
//
// Converting a KubeadmControlPlane to v1beta1 turns v1beta2's contract references (apiGroup,
// kind, name) back into object references with an apiVersion, which the control-plane manager
// looks up in the referenced CRD's contract labels (its apiVersionGetter, from Cluster API's
// internal/contract package, which another module cannot import): getAPIVersion below does the
// same lookup.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/tools/clientcmd"
	bootstrapv1beta1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1beta1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta1"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/contract"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// getAPIVersion returns group/version for the latest API version of gk's CRD that implements
// the newest Cluster API contract it declares (labels cluster.x-k8s.io/<contract>:
// <version>[_<version>...]), as Cluster API's contract.GetAPIVersion does.
func getAPIVersion(c client.Reader, gk schema.GroupKind) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	name := contract.CalculateCRDName(gk.Group, gk.Kind)
	if err := c.Get(ctx, client.ObjectKey{Name: name}, meta); err != nil {
		return "", fmt.Errorf("failed to get apiVersion for kind %s: %w", gk.Kind, err)
	}
	for _, contractVersion := range []string{"v1beta2", "v1beta1"} {
		supported := meta.GetLabels()["cluster.x-k8s.io/"+contractVersion]
		if supported == "" {
			continue
		}
		versions := strings.Split(supported, "_")
		sort.Slice(versions, func(i, j int) bool {
			return version.CompareKubeAwareVersionStrings(versions[i], versions[j]) < 0
		})
		return schema.GroupVersion{Group: gk.Group, Version: versions[len(versions)-1]}.String(), nil
	}
	return "", fmt.Errorf("CRD %s has no cluster.x-k8s.io/v1beta2 or v1beta1 contract label", name)
}

// crdAnswerTTL is how long a CRD's answer is kept. Converting a list of KubeadmControlPlanes
// asks for the contract of each one's references: with one GET per object (throttled by
// client-go to 5/s) the API server's watch cache of 100 KCPs never finished initialising
// (429 "storage is (re)initializing" on every list). The kubeadm control-plane manager reads
// CRDs from its informer cache; a short-lived cache of the answers does the same here.
const crdAnswerTTL = 10 * time.Second

type cachedAnswer struct {
	version string
	err     error
	at      time.Time
}

// versionCache remembers getAPIVersion's answers for crdAnswerTTL.
type versionCache struct {
	mu      sync.Mutex
	answers map[schema.GroupKind]cachedAnswer
	reader  client.Reader
}

func (v *versionCache) get(gk schema.GroupKind) (string, error) {
	v.mu.Lock()
	a, ok := v.answers[gk]
	v.mu.Unlock()
	if ok && time.Since(a.at) < crdAnswerTTL {
		return a.version, a.err
	}
	version, err := getAPIVersion(v.reader, gk)
	v.mu.Lock()
	v.answers[gk] = cachedAnswer{version: version, err: err, at: time.Now()}
	v.mu.Unlock()
	return version, err
}

func main() {
	listen := flag.String("listen", "127.0.0.1:29444", "address to serve HTTPS on")
	certFile := flag.String("tls-cert", "", "serving certificate (PEM)")
	keyFile := flag.String("tls-key", "", "serving key (PEM)")
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server (to read CRDs' contract labels)")
	flag.Parse()
	if *certFile == "" || *keyFile == "" || *kubeconfig == "" {
		log.Fatal("kubeadm-convert: --tls-cert, --tls-key and --kubeconfig are required")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatalf("kubeadm-convert: kubeconfig: %v", err)
	}
	cfg.Timeout = 15 * time.Second
	// No client-side throttling (a negative QPS disables client-go's token bucket): the
	// conversions of a whole list are answered at once, as the real manager's cache does.
	cfg.QPS = -1
	reader, err := client.New(cfg, client.Options{})
	if err != nil {
		log.Fatalf("kubeadm-convert: client: %v", err)
	}
	versions := &versionCache{answers: map[schema.GroupKind]cachedAnswer{}, reader: reader}
	controlplanev1beta1.SetAPIVersionGetter(versions.get)

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		bootstrapv1beta1.AddToScheme, bootstrapv1.AddToScheme,
		controlplanev1beta1.AddToScheme, controlplanev1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			log.Fatalf("kubeadm-convert: scheme: %v", err)
		}
	}

	mux := http.NewServeMux()
	mux.Handle("/convert", conversion.NewWebhookHandler(scheme, conversion.NewRegistry()))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := &http.Server{
		Addr:              *listen,
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12},
	}
	log.Printf("kubeadm-convert: serving /convert on https://%s", *listen)
	log.Fatal(srv.ListenAndServeTLS(*certFile, *keyFile))
}
