// Icarus testbench for fanin_si5324_init (gen/tests/boards.rs): an open-drain bus with
// pull-ups and an I2C slave model that decodes what the master sends and prints it:
//   S            START (SDA falls while SCL is high)
//   P            STOP (SDA rises while SCL is high)
//   B xx A|N     a byte and whether the slave acknowledged it
// and, at the end, the shortest bus timings seen (ns) and the done/error outputs.
// The slave acknowledges addresses 0x74 and 0x68 (write) and every data byte; it refuses
// the first NACK_D0 address bytes 0xd0 (0x68 write), and everything if NEVER_ACK.
`timescale 1ns / 1ps
module tb;
parameter NACK_D0 = 0;
parameter NEVER_ACK = 0;
parameter MAX_TRIES = 3;
localparam CLK_HZ = 4000000;
localparam LOCK_DELAY = 400;

reg clk = 1'b0;
always #125 clk = ~clk;
reg rst = 1'b1;
wire scl_low, sda_low, done, error;
reg slave_low = 1'b0;
wire scl = ~scl_low;
wire sda = ~(sda_low | slave_low);

fanin_si5324_init #(
    .CLK_HZ(CLK_HZ),
    .I2C_HZ(100000),
    .START_DELAY(40),
    .RETRY_DELAY(80),
    .LOCK_DELAY(LOCK_DELAY),
    .MAX_TRIES(MAX_TRIES)
) dut (
    .clk(clk),
    .rst(rst),
    .sda_i(sda),
    .scl_low(scl_low),
    .sda_low(sda_low),
    .done(done),
    .error(error)
);

integer nbits = 0;
reg [7:0] byte_in = 0;
reg first = 1'b0;
reg ack = 1'b0;
reg in_frame = 1'b0;
integer nack_left = NACK_D0;
realtime t_scl_rise = 0, t_scl_fall = 0, t_start = -1.0e9, t_stop = -1.0e9;
realtime min_lo = 1.0e9, min_hi = 1.0e9, min_hdsta = 1.0e9, min_susto = 1.0e9, min_buf = 1.0e9;
realtime t_last_stop = 0, t_done = 0;

// START and STOP: SDA edges while SCL is high.
reg armed = 1'b0;
always @(negedge sda) if (armed && scl === 1'b1) begin
    $display("S");
    if ($realtime - t_stop < min_buf) min_buf = $realtime - t_stop;
    t_start = $realtime;
    nbits = 0;
    first = 1'b1;
    in_frame = 1'b1;
end
always @(posedge sda) if (armed && scl === 1'b1) begin
    $display("P");
    if ($realtime - t_scl_rise < min_susto) min_susto = $realtime - t_scl_rise;
    t_stop = $realtime;
    t_last_stop = $realtime;
    in_frame = 1'b0;
end

always @(posedge scl) begin
    if ($realtime - t_scl_fall < min_lo && t_scl_fall > 0) min_lo = $realtime - t_scl_fall;
    t_scl_rise = $realtime;
    if (in_frame && nbits < 8) begin
        byte_in = {byte_in[6:0], sda};
        nbits = nbits + 1;
    end
end

always @(negedge scl) begin
    if ($realtime - t_scl_rise < min_hi) min_hi = $realtime - t_scl_rise;
    if (t_start >= t_scl_rise && $realtime - t_start < min_hdsta) min_hdsta = $realtime - t_start;
    t_scl_fall = $realtime;
    if (in_frame) begin
        if (nbits == 8) begin
            // After the 8th bit: acknowledge (pull SDA low) for the 9th clock, or not.
            if (NEVER_ACK) ack = 1'b0;
            else if (!first) ack = 1'b1;
            else if (byte_in == 8'hd0 && nack_left > 0) begin
                ack = 1'b0;
                nack_left = nack_left - 1;
            end else ack = byte_in == 8'he8 || byte_in == 8'hd0;
            #50 slave_low = ack;
            nbits = 9;
        end else if (nbits == 9) begin
            #50 slave_low = 1'b0;
            $display("B %02x %s", byte_in, ack ? "A" : "N");
            nbits = 0;
            first = 1'b0;
        end
    end
end

always @(posedge done) t_done = $realtime;

initial begin
    #1000 rst = 1'b0;
    armed = 1'b1;
    wait (done === 1'b1 || error === 1'b1);
    #(2.0e5);
    $display("T lo=%0d hi=%0d hdsta=%0d susto=%0d buf=%0d", min_lo, min_hi, min_hdsta, min_susto, min_buf);
    $display("D done=%0d error=%0d lock_wait=%0d", done, error, t_done - t_last_stop);
    $finish;
end

initial begin
    #(1.0e9);
    $display("TIMEOUT");
    $finish;
end
endmodule
