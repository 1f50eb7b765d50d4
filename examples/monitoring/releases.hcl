release "alertmanager" {
  chart            = "./charts/alertmanager"
  create_namespace = true
  values = [
    { env = { ALERTMANAGER_CLUSTER = "false" } },
  ]
  labels = local.common_labels
}

release "prometheus" {
  chart = "./charts/prometheus"
  values = [
    templatefile("values/prometheus.yaml.tpl", {
      retention       = var.retention
      scrape_interval = var.scrape_interval
      alertmanager    = "${release.alertmanager.name}.${release.alertmanager.namespace}.svc:9093"
    }),
  ]
  timeout = "10m"
  labels  = local.common_labels
}

release "grafana" {
  chart = "./charts/grafana"
  values = [
    {
      env = {
        GF_DATASOURCE_URL = "http://${release.prometheus.name}.${release.prometheus.namespace}.svc:9090"
      }
    },
  ]
  set_sensitive = { "env.GF_SECURITY_ADMIN_PASSWORD" = var.grafana_admin_password }
  labels        = merge(local.common_labels, { ui = "true" })
}
