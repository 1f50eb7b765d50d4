release "web" {
  chart     = "./charts/web"
  namespace = var.namespace
}
