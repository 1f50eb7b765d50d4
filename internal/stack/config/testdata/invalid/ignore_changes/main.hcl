release "web" {
  chart = "./charts/web"
  ignore_changes = [
    { name = "web", paths = ["/spec/replicas"] },
    { kind = "Deployment", paths = ["spec/replicas", "/metadata/name", "/a~2b"] },
    { kind = "Deployment", name = "[", paths = [] },
    { kind = "Service", path = ["/spec/ports"] },
    "Deployment",
  ]
}

release "api" {
  chart          = "./charts/api"
  ignore_changes = { kind = "Deployment" }
}
