release "web" {
  chart = "./charts/ÿş"
}
