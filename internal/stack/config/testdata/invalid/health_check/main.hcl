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
    current     = "${var.x}"
  }
  health_check {
    api_version = "argoproj.io/v1alpha1"
    kind        = "Rollout"
  }
}
