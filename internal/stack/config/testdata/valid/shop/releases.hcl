release "db" {
  chart            = "./charts/postgres"
  version          = "^15.2.0"
  namespace        = "data"
  create_namespace = true
  values = [
    file("values/db.yaml"),
    { auth = { password = var.db_password } },
  ]
  set           = { "primary.persistence.enabled" = false }
  set_sensitive = { "auth.replicationPassword" = var.db_password }
  wait            = true
  wait_for_jobs   = true
  timeout         = "5m"
  atomic          = true
  cleanup_on_fail = true
  history_max     = 10
  disable_hooks   = false
  labels          = merge(local.tags, { tier = "data" })
  cluster         = cluster.dev
}

release "api" {
  for_each   = toset(["eu", "us"])
  name       = "api-${each.key}"
  chart      = "./charts/api"
  depends_on = [release.db]
  values = [{
    region   = each.key
    replicas = var.replicas
    domain   = "api.${each.key}.${local.domain}"
    db       = { host = "${release.db.name}.${release.db.namespace}.svc", revision = release.db.revision }
  }]
}

release "monitor" {
  chart   = "prom/prometheus"
  version = "25.8.0"
  timeout = "90s"
  values  = [yamlencode({ server = { retention = "7d" } })]
}

release "worker" {
  count = 2
  chart = "./charts/api"
  set   = { "index" = count.index, "apiName" = release.api["eu"].name }
}
