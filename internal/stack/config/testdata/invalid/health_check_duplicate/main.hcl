release "web" {
  chart = "./charts/web"
  health_check {
    api_version = "cert-manager.io/v1"
    kind        = "Certificate"
    current     = "true"
  }
  health_check {
    api_version = "cert-manager.io/v1"
    kind        = "Certificate"
    current     = "false"
  }
}
