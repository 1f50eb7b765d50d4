release "web" {
  chart = "./charts/web"
  crds  = "replace"
}
