release "web" {
  chart   = "./charts/web"
  version = "not a version"
  timeout = "soon"
  values  = [42, "- just\n- a list\n", { ok = true }]
}

release "api" {
  for_each = ["a", "b"]
  chart    = "prom/api"
  name     = "api"
}

release "worker" {
  chart = "./charts/worker"
  name  = "Worker_1"
  labels = { n = release.web.revision }
}
