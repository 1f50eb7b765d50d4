release "web" {
  chart    = "./charts/web"
  replicas = 3
}
