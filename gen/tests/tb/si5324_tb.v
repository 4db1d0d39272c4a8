// Icarus testbench for fanin_si5324_init (gen/tests/boards.rs): an open-drain bus with
// pull-ups and an I2C slave model that decodes what the master sends and prints it:
//   S            START (SDA falls while SCL is high, bus idle)
//   Sr           repeated START (the same inside a transfer)
//   P            STOP (SDA rises while SCL is high)
//   B xx A|N     a byte the master sent and whether the slave acknowledged it
//   R xx A|N     a byte the slave sent (a read) and whether the master acknowledged it
//   Q valid=v lol=l   the master's stat_valid and lol outputs at `done` and 2 us after
//                each STOP that follows `done`
// and, at the end, the shortest bus timings seen (ns) and the done/error outputs.
// The slave acknowledges addresses 0x74 and 0x68 (write and read) and every data byte it
// receives; it refuses the first NACK_D0 address bytes 0xd0 (0x68 write), the read address
// byte 0xd1 of read number NACK_READ (from 0; -1: none), and everything if NEVER_ACK. Read
// number k returns byte RD(k) (function rd_byte below; gen/tests/boards.rs has the same
// table). The run ends with the STOP of the READS-th read (or 200 us after `error`).
`timescale 1ns / 1ps
module tb;
parameter NACK_D0 = 0;
parameter NEVER_ACK = 0;
parameter MAX_TRIES = 3;
parameter NACK_READ = -1;
parameter READS = 4;
localparam CLK_HZ = 4000000;
localparam LOCK_DELAY = 400;
localparam POLL_PERIOD = 200;

reg clk = 1'b0;
always #125 clk = ~clk;
reg rst = 1'b1;
wire scl_low, sda_low, done, error, stat_valid, lol;
reg slave_low = 1'b0;
wire scl = ~scl_low;
wire sda = ~(sda_low | slave_low);

fanin_si5324_init #(
    .CLK_HZ(CLK_HZ),
    .I2C_HZ(100000),
    .START_DELAY(40),
    .RETRY_DELAY(80),
    .LOCK_DELAY(LOCK_DELAY),
    .MAX_TRIES(MAX_TRIES),
    .POLL_PERIOD(POLL_PERIOD)
) dut (
    .clk(clk),
    .rst(rst),
    .sda_i(sda),
    .scl_low(scl_low),
    .sda_low(sda_low),
    .done(done),
    .error(error),
    .stat_valid(stat_valid),
    .lol(lol)
);

// The byte the slave returns on read number k: LOL_INT (bit 0) set, then clear with every
// other bit set, then set again with the others clear, then clear.
function [7:0] rd_byte(input integer k);
    case (k % 4)
        0: rd_byte = 8'ha5;
        1: rd_byte = 8'hfe;
        2: rd_byte = 8'h01;
        default: rd_byte = 8'h06;
    endcase
endfunction

integer nbits = 0;
reg [7:0] byte_in = 0;
reg [7:0] byte_out = 0;
reg first = 1'b0;
reg ack = 1'b0;
reg in_frame = 1'b0;
reg reading = 1'b0;   // the slave sends the data bytes of this transfer
reg master_ack = 1'b0;
integer nack_left = NACK_D0;
integer reads = 0;    // read address bytes (0xd1) seen
integer reads_done = 0;
realtime t_scl_rise = 0, t_scl_fall = 0, t_start = -1.0e9, t_stop = -1.0e9;
realtime min_lo = 1.0e9, min_hi = 1.0e9, min_hdsta = 1.0e9, min_susto = 1.0e9, min_buf = 1.0e9;
realtime min_susta = 1.0e9;
realtime t_last_stop = 0, lock_wait = 0;

// START and STOP: SDA edges while SCL is high.
reg armed = 1'b0;
always @(negedge sda) if (armed && scl === 1'b1) begin
    if (in_frame) begin
        $display("Sr");
        if ($realtime - t_scl_rise < min_susta) min_susta = $realtime - t_scl_rise;
    end else begin
        $display("S");
        if ($realtime - t_stop < min_buf) min_buf = $realtime - t_stop;
    end
    t_start = $realtime;
    nbits = 0;
    first = 1'b1;
    in_frame = 1'b1;
    reading = 1'b0;
end
event stopped;
always @(posedge sda) if (armed && scl === 1'b1) begin
    $display("P");
    if ($realtime - t_scl_rise < min_susto) min_susto = $realtime - t_scl_rise;
    t_stop = $realtime;
    t_last_stop = $realtime;
    in_frame = 1'b0;
    reading = 1'b0;
    -> stopped;
end
// The master's status outputs after each STOP once done (its poll ends at the STOP).
always @(stopped) if (done) begin
    #2000 $display("Q valid=%0d lol=%0d", stat_valid, lol);
    if (reads > reads_done) reads_done = reads;
end

always @(posedge scl) begin
    if ($realtime - t_scl_fall < min_lo && t_scl_fall > 0) min_lo = $realtime - t_scl_fall;
    t_scl_rise = $realtime;
    if (in_frame && nbits < 8) begin
        byte_in = {byte_in[6:0], sda};
        nbits = nbits + 1;
    end else if (in_frame && nbits == 9 && reading) begin
        // The 9th clock of a byte the slave sent: the master's ACK (SDA low) or NACK.
        master_ack = !sda;
    end
end

always @(negedge scl) begin
    if ($realtime - t_scl_rise < min_hi) min_hi = $realtime - t_scl_rise;
    if (t_start >= t_scl_rise && $realtime - t_start < min_hdsta) min_hdsta = $realtime - t_start;
    t_scl_fall = $realtime;
    if (in_frame && reading) begin
        // The slave drives the next data bit while SCL is low; releases SDA for the 9th.
        if (nbits >= 1 && nbits < 8) begin
            #50 slave_low = ~byte_out[7 - nbits];
        end else if (nbits == 8) begin
            #50 slave_low = 1'b0;
            nbits = 9;
        end else if (nbits == 9) begin
            $display("R %02x %s", byte_in, master_ack ? "A" : "N");
            nbits = 0;
            // After an ACK the next byte (the same one again); after a NACK, nothing.
            if (master_ack) #50 slave_low = ~byte_out[7];
        end
    end else if (in_frame) begin
        if (nbits == 8) begin
            // After the 8th bit: acknowledge (pull SDA low) for the 9th clock, or not.
            if (NEVER_ACK) ack = 1'b0;
            else if (!first) ack = 1'b1;
            else if (byte_in == 8'hd0 && nack_left > 0) begin
                ack = 1'b0;
                nack_left = nack_left - 1;
            end else if (byte_in == 8'hd1) begin
                ack = reads != NACK_READ;
                byte_out = rd_byte(reads);
                reads = reads + 1;
            end else ack = byte_in == 8'he8 || byte_in == 8'hd0;
            #50 slave_low = ack;
            nbits = 9;
        end else if (nbits == 9) begin
            #50 slave_low = 1'b0;
            $display("B %02x %s", byte_in, ack ? "A" : "N");
            nbits = 0;
            // An acknowledged read address: the slave sends from the next clock on.
            if (first && ack && byte_in[0]) begin
                reading = 1'b1;
                slave_low = ~byte_out[7];
            end
            first = 1'b0;
        end
    end
end

always @(posedge done) begin
    lock_wait = $realtime - t_last_stop;
    $display("Q valid=%0d lol=%0d", stat_valid, lol);
end

initial begin
    #1000 rst = 1'b0;
    armed = 1'b1;
    wait (done === 1'b1 || error === 1'b1);
    // After done, stop at the end of the READS-th read; after error, see that nothing follows.
    if (done === 1'b1) wait (reads_done >= READS);
    else #(2.0e5);
    $display("T lo=%0d hi=%0d hdsta=%0d susto=%0d buf=%0d susta=%0d", min_lo, min_hi, min_hdsta, min_susto, min_buf, min_susta);
    $display("D done=%0d error=%0d lock_wait=%0d", done, error, lock_wait);
    $finish;
end

initial begin
    #(1.0e9);
    $display("TIMEOUT");
    $finish;
end
endmodule
