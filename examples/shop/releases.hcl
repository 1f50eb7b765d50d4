# The example charts name their Service RELEASE-CHART, or just RELEASE when
# the release name already contains the chart name (api-eu-west, not
# api-eu-west-api), like charts made with `helm create`.

release "db" {
  chart            = "./charts/postgres"
  version          = "~0.1.0"
  namespace        = "shop-data"
  create_namespace = true
  values = [
    file("values/postgres.yaml"),
    { env = { POSTGRES_DB = "shop", POSTGRES_USER = "shop" } },
  ]
  set_sensitive = { "env.POSTGRES_PASSWORD" = var.db_password }
  wait          = true
  timeout       = "10m"
  atomic        = true
  history_max   = 5
  labels        = merge(local.labels, { tier = "data" })
}

release "api" {
  for_each         = var.regions
  name             = "api-${each.key}"
  chart            = "./charts/api"
  namespace        = "shop-${each.key}"
  create_namespace = true
  values = [{
    replicaCount = var.api_replicas
    image        = { tag = var.api_image_tag }
    env = {
      REGION       = each.key
      DATABASE_URL = "postgres://shop@${release.db.name}-postgres.${release.db.namespace}.svc:5432/shop"
    }
  }]
  set_sensitive = { "env.DATABASE_PASSWORD" = var.db_password }
  wait          = true
  wait_for_jobs = true
  timeout       = "5m"
  labels        = merge(local.labels, { tier = "api", region = each.key })
}

release "web" {
  for_each  = var.regions
  name      = "web-${each.key}"
  chart     = "./charts/web"
  namespace = "shop-${each.key}"
  values = [{
    env = {
      PUBLIC_URL = "https://${each.key}.${local.domain}"
      API_URL    = "http://${release.api[each.key].name}:8080"
    }
  }]
  set    = { "service.type" = "ClusterIP" }
  wait   = true
  labels = merge(local.labels, { tier = "web", region = each.key })
}
