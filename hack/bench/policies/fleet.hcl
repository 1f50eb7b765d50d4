# Twenty object-level policies for hack/bench/policy.sh: what teams write
# (docs/policies.md), guarded so that none denies the bench's plans.
policy "keep_pvc" {
  condition = "!(object.kind == 'PersistentVolumeClaim' && object.action == 'delete')"
}
policy "no_statefulset_replace" {
  condition = "!(object.kind == 'StatefulSet' && object.action == 'replace')"
}
policy "no_latest" {
  condition = "object.after == null || !has(object.after.spec) || !has(object.after.spec.template) || object.after.spec.template.spec.containers.all(c, !c.image.endsWith(':latest'))"
}
policy "replicas_halved" {
  condition = "object.kind != 'Deployment' || object.before == null || object.after == null || !has(object.after.spec.replicas) || !has(object.before.spec.replicas) || object.after.spec.replicas * 2 >= object.before.spec.replicas"
}
policy "no_kube_system" {
  condition = "object.namespace != 'kube-system'"
}
policy "limits" {
  level     = "warn"
  condition = "object.kind != 'StatefulSet' || object.after == null || object.after.spec.template.spec.containers.all(c, has(c.resources))"
}
policy "keep_secrets" {
  condition = "!(object.kind == 'Secret' && object.action == 'delete' && object.name.startsWith('prod-'))"
}
policy "service_type" {
  condition = "object.kind != 'Service' || object.before == null || object.after == null || !has(object.before.spec.type) || object.before.spec.type == object.after.spec.type"
}
policy "labelled" {
  condition = "object.after == null || has(object.after.metadata.labels) || object.kind in ['ConfigMap', 'Secret', 'ServiceAccount', 'Service', 'NetworkPolicy', 'PodDisruptionBudget', 'HorizontalPodAutoscaler', 'Pod']"
}
policy "no_hostpath" {
  condition = "object.after == null || !has(object.after.spec) || !has(object.after.spec.template) || !has(object.after.spec.template.spec.volumes) || object.after.spec.template.spec.volumes.all(v, !has(v.hostPath))"
}
policy "no_privileged" {
  condition = "object.after == null || !has(object.after.spec) || !has(object.after.spec.template) || object.after.spec.template.spec.containers.all(c, !has(c.securityContext) || !has(c.securityContext.privileged) || !c.securityContext.privileged)"
}
policy "no_nodeport" {
  condition = "object.kind != 'Service' || object.after == null || !has(object.after.spec.type) || object.after.spec.type != 'NodePort'"
}
policy "no_crd_delete" {
  condition = "!(object.kind == 'CustomResourceDefinition' && object.action == 'delete')"
}
policy "no_namespace_delete" {
  condition = "!(object.kind == 'Namespace' && object.action == 'delete')"
}
policy "no_manager_takeover" {
  level     = "warn"
  condition = "!object.changes.exists(c, c.manager == 'kubectl-edit')"
}
policy "image_registry" {
  condition = "object.after == null || !has(object.after.spec) || !has(object.after.spec.template) || object.after.spec.template.spec.containers.all(c, !c.image.startsWith('evil.example/'))"
}
policy "pdb_kept" {
  condition = "!(object.kind == 'PodDisruptionBudget' && object.action == 'delete')"
}
policy "hpa_min" {
  condition = "object.kind != 'HorizontalPodAutoscaler' || object.after == null || !has(object.after.spec.minReplicas) || object.after.spec.minReplicas >= 1"
}
policy "netpol_kept" {
  condition = "!(object.kind == 'NetworkPolicy' && object.action == 'delete')"
}
policy "small_changes" {
  level     = "warn"
  condition = "size(object.changes) < 200"
}
