release "web" {
  chart = "./charts/web
}
